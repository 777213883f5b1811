/* SPDX-License-Identifier: GPL-2.0 */
#ifndef IT_DAEMON_H
#define IT_DAEMON_H

struct it_opts;

/* Standalone mode: trace until signalled or --duration. Returns the exit status. */
int it_daemon_run(const struct it_opts *o);

#endif /* IT_DAEMON_H */
