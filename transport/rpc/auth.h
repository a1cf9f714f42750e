// RPC credentials: AUTH_NONE and AUTH_SYS (RFC 5531 §8.2 and appendix A).
#pragma once

#include <cstdint>
#include <span>

#include "transport/rpc/call.h"

namespace nfsrdmad::rpc {

// Fills `out` from a call's credential and verifier. Returns an auth_stat:
// AUTH_OK, AUTH_BADCRED (malformed body, unknown flavor) or AUTH_BADVERF.
uint32_t parse_credential(uint32_t flavor, std::span<const uint8_t> body, uint32_t verf_flavor,
                          Credential& out);

}  // namespace nfsrdmad::rpc
