/* SPDX-License-Identifier: GPL-2.0 */
/*
 * linkauth: the link's mutual authentication (docs/link.md, "Authentication"),
 * HMAC-SHA256 from libsodium. Pure functions over bytes: link.c drives the
 * exchange, tests call these to play a peer by hand.
 *
 * Each side puts a fresh 32-byte nonce in its HELLO. With a key, each side
 * then sends AUTH = HMAC-SHA256(key, LINKAUTH_CONTEXT || signer role ||
 * guest's HELLO payload || host's HELLO payload): both nonces and both
 * HELLOs are MACed, and the signer's role is the direction label, so a
 * recorded AUTH is worth nothing on a connection with another nonce, and a
 * side's own AUTH reflected back to it does not verify.
 */
#ifndef IT_LINKAUTH_H
#define IT_LINKAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "lib/keyfile.h"

#define LINKAUTH_NONCE_LEN 32
#define LINKAUTH_MAC_LEN 32
#define LINKAUTH_CONTEXT "iotracer link v2 auth"

/* libsodium's one-time set-up. 0, or -1 when it cannot run (no entropy source). */
int linkauth_init(void);
/* A fresh random nonce (libsodium's randombytes_buf; linkauth_init() first). */
void linkauth_nonce(uint8_t nonce[LINKAUTH_NONCE_LEN]);
/* The AUTH of the side whose role is signer, over both HELLO payloads (len bytes each). */
void linkauth_mac(const struct link_key *k, uint8_t signer, const void *guest_hello,
		  const void *host_hello, size_t len, uint8_t mac[LINKAUTH_MAC_LEN]);
/* 0 when mac is signer's AUTH for these HELLOs (constant time), else -EACCES. */
int linkauth_verify(const struct link_key *k, uint8_t signer, const void *guest_hello,
		    const void *host_hello, size_t len, const uint8_t mac[LINKAUTH_MAC_LEN]);

#endif /* IT_LINKAUTH_H */
