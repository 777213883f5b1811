# shellcheck shell=sh
# Guest side of the lab smoke test (runs as /lab/run.sh under busybox sh; see
# tests/lab/run.sh for the host side). Prints one fact per line:
#   kver RELEASE
#   tp GROUP yes|no EVENT,EVENT,...        tracepoint groups nvme, scsi, block
#   btf vmlinux|MODULE yes|no              /sys/kernel/btf/*
#   kprobe_events yes|no                   tracefs kprobe_events file
#   kprobe SYMBOL yes|no                   a kprobe event on SYMBOL was created
#   sym SYMBOL kallsyms|- ftrace|-         in /proc/kallsyms, fentry/kprobe-able
#   vsock_loopback yes|no
#   ioload DISK JSON                       one line per ioload run
# Parameters (from the host via LAB_G_*): LAB_G_COUNT ops per run (256),
# LAB_G_BS block size (4096).
set -u
count=${LAB_G_COUNT:-256}
bs=${LAB_G_BS:-4096}
T=/sys/kernel/tracing

echo "kver $(uname -r)"

for g in nvme scsi block; do
	if [ -d "$T/events/$g" ]; then
		ev=$(for e in "$T/events/$g"/*/; do basename "$e"; done | tr '\n' ',' | sed 's/,$//')
		echo "tp $g yes $ev"
	else
		echo "tp $g no"
	fi
done

for b in vmlinux nvme nvme_core virtio_blk virtio_scsi sd_mod scsi_mod; do
	if [ -e "/sys/kernel/btf/$b" ]; then echo "btf $b yes"; else echo "btf $b no"; fi
done

if [ -e "$T/kprobe_events" ]; then
	echo "kprobe_events yes"
	for s in blk_mq_start_request nvme_queue_rq virtqueue_notify; do
		if echo "p:lab/probe_$s $s" >>"$T/kprobe_events" 2>/dev/null; then
			echo "kprobe $s yes"
			echo "-:lab/probe_$s" >>"$T/kprobe_events" 2>/dev/null
		else
			echo "kprobe $s no"
		fi
	done
else
	echo "kprobe_events no"
fi

# Symbols the nvme/scsi/virtio layers want to hook: present, and ftrace-able
# (available_filter_functions: what fentry and ftrace-based kprobes can attach).
aff=$T/available_filter_functions
[ -r "$aff" ] || aff=/dev/null
syms="nvme_queue_rq nvme_queue_rqs nvme_complete_rq nvme_pci_complete_rq
	virtio_queue_rq virtio_queue_rqs virtqueue_add_sgs virtqueue_notify virtqueue_kick_prepare
	vring_interrupt virtblk_done virtblk_request_done virtscsi_queuecommand virtscsi_complete_cmd
	scsi_queue_rq blk_mq_start_request blk_mq_end_request"
# One pass over each file (TCG makes repeated greps of kallsyms slow).
awk -v want="$syms" '
	BEGIN { n = split(want, a, /[ \t\n]+/); for (i = 1; i <= n; i++) if (a[i] != "") w[a[i]] = 1 }
	FILENAME == "/proc/kallsyms" { if ($3 in w) k[$3] = 1; next }
	{ if ($1 in w) f[$1] = 1 }
	END { for (i = 1; i <= n; i++) if (a[i] != "")
		print "sym", a[i], ((a[i] in k) ? "kallsyms" : "-"), ((a[i] in f) ? "ftrace" : "-") }
' /proc/kallsyms "$aff"

if grep -q vsock_loopback /proc/modules 2>/dev/null || [ -d /sys/module/vsock_loopback ]; then
	echo "vsock_loopback yes"
else
	echo "vsock_loopback no"
fi

rc=0
for d in /dev/nvme0n1 /dev/sda /dev/vda; do
	for m in randwrite randread; do
		out=$(ioload -d "$d" -n "$count" -b "$bs" -m "$m" -s 42 2>&1) || rc=1
		echo "ioload $d $out"
	done
done
exit $rc
