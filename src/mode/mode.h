/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mode: the guest and host modes, each a struct mode_ops (service/daemon.h: the
 * daemon's side of the hooks); main.c hands them to the daemon.
 */
#ifndef IT_MODE_H
#define IT_MODE_H

#include "service/daemon.h"

extern const struct mode_ops guest_mode_ops;
extern const struct mode_ops host_mode_ops;

#endif /* IT_MODE_H */
