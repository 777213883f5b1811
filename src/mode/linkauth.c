// SPDX-License-Identifier: GPL-2.0
/*
 * linkauth: HMAC-SHA256 challenge-response of the link (linkauth.h), all
 * crypto from libsodium.
 */
#include <errno.h>
#include <sodium.h>

#include "mode/linkauth.h"

_Static_assert(crypto_auth_hmacsha256_BYTES == LINKAUTH_MAC_LEN, "HMAC-SHA256 size");

int linkauth_init(void)
{
	return sodium_init() < 0 ? -1 : 0;
}

void linkauth_nonce(uint8_t nonce[LINKAUTH_NONCE_LEN])
{
	randombytes_buf(nonce, LINKAUTH_NONCE_LEN);
}

void linkauth_mac(const struct link_key *k, uint8_t signer, const void *guest_hello,
		  const void *host_hello, size_t len, uint8_t mac[LINKAUTH_MAC_LEN])
{
	static const char ctx[] = LINKAUTH_CONTEXT; /* its NUL is MACed too */
	crypto_auth_hmacsha256_state st;

	crypto_auth_hmacsha256_init(&st, k->bytes, k->len);
	crypto_auth_hmacsha256_update(&st, (const unsigned char *)ctx, sizeof(ctx));
	crypto_auth_hmacsha256_update(&st, &signer, 1);
	crypto_auth_hmacsha256_update(&st, guest_hello, len);
	crypto_auth_hmacsha256_update(&st, host_hello, len);
	crypto_auth_hmacsha256_final(&st, mac);
	sodium_memzero(&st, sizeof(st));
}

int linkauth_verify(const struct link_key *k, uint8_t signer, const void *guest_hello,
		    const void *host_hello, size_t len, const uint8_t mac[LINKAUTH_MAC_LEN])
{
	uint8_t want[LINKAUTH_MAC_LEN];
	int ok;

	linkauth_mac(k, signer, guest_hello, host_hello, len, want);
	ok = !sodium_memcmp(want, mac, LINKAUTH_MAC_LEN);
	sodium_memzero(want, sizeof(want));
	return ok ? 0 : -EACCES;
}
