/* SPDX-License-Identifier: GPL-2.0 */
/*
 * metrics_http: serve the latest metrics text on http://ADDR/metrics from a
 * small HTTP/1.0 server thread of its own (docs/metrics.md).
 *
 * The event loop publishes a finished text; a request takes a reference to
 * the current one under a mutex held for a pointer read, and the text is freed
 * when neither the server nor a response still uses it. The record path never
 * waits for the HTTP thread.
 */
#ifndef IT_METRICS_HTTP_H
#define IT_METRICS_HTTP_H

#include <stddef.h>

struct metrics_http;

/*
 * Listen on addr (as --metrics takes it: "IP:PORT", "[IPV6]:PORT", ":PORT")
 * and start the server thread. NULL on failure, with one error line printed that
 * starts with who ("--metrics", or the config file's "FILE:LINE: metrics": cli_where).
 * Until the first publish, /metrics answers 503.
 */
struct metrics_http *metrics_http_start(const char *addr, const char *who);

/* Make text[0..len) (malloc'd; owned from here) what /metrics serves. */
void metrics_http_publish(struct metrics_http *h, char *text, size_t len);

/* Stop the thread, close the socket, free everything. NULL ok. */
void metrics_http_stop(struct metrics_http *h);

#endif /* IT_METRICS_HTTP_H */
