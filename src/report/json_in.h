/* SPDX-License-Identifier: GPL-2.0 */
/*
 * json_in: the JSON reader report/jsonl.c uses: struct bj, bj_parse(),
 * bj_free(), bj_get(), bj_path(), bj_num(). The project's reader lives in
 * src/bench/bench.c today and is being moved to src/lib/json.{c,h}; once it
 * is there, include "lib/json.h" here instead (nothing else changes).
 */
#ifndef IT_REPORT_JSON_IN_H
#define IT_REPORT_JSON_IN_H

#include "bench/bench.h"

#endif /* IT_REPORT_JSON_IN_H */
