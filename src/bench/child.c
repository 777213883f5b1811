// SPDX-License-Identifier: GPL-2.0
/*
 * child: the processes a bench starts (fio, the tracers), each in its own
 * process group so that stopping it stops its jobs too; and the signals that
 * stop the bench. The only file-scope state of the bench lives here because
 * the signal handler needs it: the stop and alarm flags, and the children to
 * clean up after Ctrl-C.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/internal.h"
#include "lib/clock.h"
#include "lib/log.h"

static volatile sig_atomic_t g_stop; /* SIGINT/SIGTERM/SIGHUP: stop and clean up */
static volatile sig_atomic_t g_alarm;

#define MAX_KIDS 8
static pid_t g_kids[MAX_KIDS]; /* process groups we started and did not reap yet */

static void on_signal(int sig)
{
	if (sig == SIGALRM)
		g_alarm = 1;
	else
		g_stop = 1;
}

void bench_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: waits return EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int bench_stopped(void)
{
	return g_stop;
}

void bench_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void kids_add(pid_t p)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (!g_kids[i]) {
			g_kids[i] = p;
			return;
		}
}

void bench_child_forget(pid_t p)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (g_kids[i] == p)
			g_kids[i] = 0;
}

/* In the child: stdin from /dev/null, stdout/stderr to files (NULL: /dev/null). */
static void child_stdio(const char *out, const char *err)
{
	int fd = open("/dev/null", O_RDONLY);

	if (fd >= 0) {
		dup2(fd, 0);
		close(fd);
	}
	fd = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		close(fd);
	}
	if (err && out && !strcmp(err, out)) {
		dup2(1, 2);
		return;
	}
	fd = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		dup2(fd, 2);
		close(fd);
	}
}

/* In a new child: its own process group, SIGKILL if we die, default signals. */
static int child_setup(pid_t parent)
{
	sigset_t none;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return -1;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	return 0;
}

/* After fork() in the parent: the child is ours to stop and to reap. */
static pid_t child_started(pid_t pid)
{
	if (pid < 0)
		return -errno;
	setpgid(pid, pid);
	kids_add(pid);
	return pid;
}

pid_t bench_spawn(char *const argv[], const char *out, const char *err, int verbose)
{
	pid_t parent = getpid(), pid;

	if (verbose) {
		char line[2048];
		size_t o = 0;

		for (int i = 0; argv[i] && o < sizeof(line) - 1; i++)
			o += snprintf(line + o, sizeof(line) - o, "%s%s", i ? " " : "", argv[i]);
		bench_progress("  exec: %s", line);
	}
	pid = fork();
	if (!pid) {
		if (child_setup(parent))
			_exit(127);
		child_stdio(out, err);
		execvp(argv[0], argv);
		it_err("exec %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	return child_started(pid);
}

pid_t bench_spawn_fn(void (*fn)(void *arg), void *arg)
{
	pid_t parent = getpid(), pid = fork();

	if (!pid) {
		if (!child_setup(parent))
			fn(arg);
		_exit(0);
	}
	return child_started(pid);
}

/* Wait for pid to exit, polling, up to timeout_ms (< 0: forever, unless g_stop). */
int bench_wait_exit(pid_t pid, int timeout_ms, int *status)
{
	uint64_t end = it_mono_ns() + (uint64_t)(timeout_ms < 0 ? 0 : timeout_ms) * 1000000ull;

	for (;;) {
		pid_t r = waitpid(pid, status, WNOHANG);

		if (r == pid) {
			bench_child_forget(pid);
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			bench_child_forget(pid);
			return -errno;
		}
		if (timeout_ms >= 0 && it_mono_ns() >= end)
			return -ETIMEDOUT;
		bench_sleep_ms(20);
	}
}

/* Signal the group; wait up to grace_ms; then SIGKILL the group and reap. */
int bench_stop_child(pid_t pid, int sig, int grace_ms, int *status)
{
	int st = 0;

	kill(-pid, sig);
	kill(pid, sig);
	if (!bench_wait_exit(pid, grace_ms, &st)) {
		if (status)
			*status = st;
		/* leftovers of the group (fio job processes) */
		kill(-pid, SIGKILL);
		return 0;
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	bench_wait_exit(pid, 5000, &st);
	if (status)
		*status = st;
	return -ETIMEDOUT;
}

void bench_kill_all_kids(void)
{
	for (int i = 0; i < MAX_KIDS; i++)
		if (g_kids[i])
			bench_stop_child(g_kids[i], SIGTERM, 5000, NULL);
}

/* Blocking wait for fio with a deadline (SIGALRM), precise end time. */
int bench_wait_fio(pid_t pid, unsigned timeout_s, int *status)
{
	int st = 0, ret = 0;

	g_alarm = 0;
	alarm(timeout_s);
	for (;;) {
		pid_t r = waitpid(pid, &st, 0);

		if (r == pid)
			break;
		if (r < 0 && errno == EINTR && !g_stop && !g_alarm)
			continue;
		alarm(0);
		ret = g_stop ? -EINTR : -ETIMEDOUT;
		bench_stop_child(pid, SIGTERM, 5000, &st);
		*status = st;
		return ret;
	}
	alarm(0);
	bench_child_forget(pid);
	*status = st;
	return 0;
}
