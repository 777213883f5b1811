// SPDX-License-Identifier: GPL-2.0
/*
 * vjnames: the names of vjoin's values (vjoin.h): stages, timestamps, why a
 * request or a host IO was not joined, what joined it, why a VM re-checks.
 * One table each, as the JSON and /metrics spell them.
 */
#include "mode/vjoin.h"

static const char *const stage_names[VJ_STAGES] = {
	[VJ_GUEST_SUBMIT] = "guest_submit",   [VJ_KICK_TO_QEMU] = "kick_to_qemu",
	[VJ_QEMU_TO_HOST] = "qemu_to_host",   [VJ_HOST_SYSCALL] = "host_syscall",
	[VJ_HOST_BLOCK] = "host_block",	      [VJ_HOST_TO_NOTIFY] = "host_to_notify",
	[VJ_NOTIFY_TO_IRQ] = "notify_to_irq", [VJ_GUEST_COMPLETE] = "guest_complete",
	[VJ_GUEST_VIRTIO] = "guest_virtio",   [VJ_QEMU_TOTAL] = "qemu_total",
	[VJ_WORLD_SWITCH] = "world_switch",   [VJ_KICK_TO_HOST] = "kick_to_host",
};

static const char *const ts_names[VJ_T_MAX] = {
	[VJ_T_G_SYS_ENTER] = "guest_sys_enter",
	[VJ_T_G_Q] = "guest_block_q",
	[VJ_T_G_D] = "guest_block_d",
	[VJ_T_G_KICK] = "guest_kick",
	[VJ_T_Q_SUBMIT] = "qemu_submit",
	[VJ_T_H_ENTER] = "host_sys_enter",
	[VJ_T_H_BLK_Q] = "host_block_q",
	[VJ_T_H_BLK_C] = "host_block_c",
	[VJ_T_H_EXIT] = "host_sys_exit",
	[VJ_T_Q_NOTIFY] = "qemu_notify",
	[VJ_T_G_IRQ] = "guest_irq",
	[VJ_T_G_C] = "guest_block_c",
	[VJ_T_G_SYS_EXIT] = "guest_sys_exit",
};

static const char *const unjoin_names[VJ_UN_MAX] = {
	[VJ_UN_NO_DISK] = "no_disk",   [VJ_UN_NO_SUBMIT] = "no_qemu_submit",
	[VJ_UN_MERGED] = "merged",     [VJ_UN_NO_HOST_IO] = "no_host_io",
	[VJ_UN_PARTIAL] = "partial",   [VJ_UN_NO_ADDRESS] = "no_address",
	[VJ_UN_UNMAPPED] = "unmapped", [VJ_UN_CLOCK] = "clock",
};

static const char *const key_names[VJ_KEY_MAX] = {
	[VJ_KEY_NONE] = "none",
	[VJ_KEY_UPROBE] = "uprobe",
	[VJ_KEY_ADDRESS] = "address",
	[VJ_KEY_OFFSET] = "offset",
};

static const char *const recheck_names[VJ_RC_MAX] = {
	[VJ_RC_NONE] = "none",
	[VJ_RC_UNMAPPED] = "unmapped",
	[VJ_RC_JOIN_RATE] = "join_rate",
	[VJ_RC_CLOCK] = "clock",
};

static const char *const hunjoin_names[VJ_HU_MAX] = {
	[VJ_HU_NOT_GUEST] = "not_guest_buffer",
	[VJ_HU_UNCLAIMED] = "unclaimed",
};

const char *vj_unjoin_name(int r)
{
	return r >= 0 && r < VJ_UN_MAX ? unjoin_names[r] : "?";
}

const char *vj_hunjoin_name(int r)
{
	return r >= 0 && r < VJ_HU_MAX ? hunjoin_names[r] : "?";
}

const char *vj_stage_name(int s)
{
	return s >= 0 && s < VJ_STAGES ? stage_names[s] : "?";
}

const char *vj_ts_name(int t)
{
	return t >= 0 && t < VJ_T_MAX ? ts_names[t] : "?";
}

const char *vj_key_name(int k)
{
	return k >= 0 && k < VJ_KEY_MAX ? key_names[k] : "?";
}

const char *vj_recheck_name(int r)
{
	return r >= 0 && r < VJ_RC_MAX ? recheck_names[r] : "?";
}
