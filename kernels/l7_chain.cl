// The L7 chain kernel (FlowShader, paper 004 §III-C/E): one work item per flow (flow-level
// parallelism) runs that flow's messages, in order, through every op of the chain (kernel
// fusion: one launch runs the whole chain). The ops and their table/state/output layouts are
// kernels/common/l7_ops.h; the host side is src/l7/flow/device_batch.hh.
//
// The batch (FlowShader Fig. 4, packed rather than a 2-D array):
//   bytes       the messages' bytes, each message at a 16-byte aligned offset; rewritten in place
//               by the ops that transform (AES)
//   msgs        per message {offset into bytes, length, flow index} (L7_MSG_WORDS)
//   flows       per flow {first message, message count, offset of its state in states}
//               (L7_FLOW_WORDS); a flow's messages are consecutive, in flow order
//   states      the flows' chain state records (each NF's slice at its offset, src/l7/nf/chain.hh)
//   chain       per op {op code, offset of its table in tables, offset of its slice in the chain
//               state} (L7_CHAIN_WORDS), `nops` of them (at most L7_MAX_OPS)
//   tables      the ops' tables, packed, each 16-byte aligned
//   out         L7_OUT_WORDS per message per op, at (message * nops + op) * L7_OUT_WORDS
//   msg_states  per message, the flow's chain state record after it (state_stride bytes), so the
//               host hands each NF the state after each message (FlowNf::finish_device)
// An op that rejects a message (AES: out[1] = 1) ends the chain for that message, as the CPU
// chain stops at the NF's verdict; the later ops' outputs stay zero and their state untouched.
// After DECRYPT the later ops see the plaintext (offset 16, out[0] bytes), as the CPU chain's
// later NFs see the body the gateway NF left.
#include "common/aes.h"
#include "common/ids_ac_layout.h"
#include "common/l7_ops.h"
#include "common/portable.h"

#define L7_MSG_WORDS 3u
#define L7_FLOW_WORDS 3u
#define L7_CHAIN_WORDS 3u
#define L7_FNV_PRIME 16777619u
#define L7_AES_BLOCK 16u
#define L7_AES_KEY_WORDS 44u
#define L7_IDS_PAIRS ((L7_OUT_WORDS - 1u) / 2u)

STATIC_ASSERT(L7_IDS_PAIRS == IDS_AC_MAX_MATCHES, "IDS_AC output pairs");

INLINE void l7_touch(GLOBAL const uint8_t* msg, uint32_t len, GLOBAL uint32_t* state,
                     GLOBAL uint32_t* out) {
  uint32_t h = *state;
  for (uint32_t k = 0; k < len; ++k) h = (h ^ msg[k]) * L7_FNV_PRIME;
  *state = h;
  out[0] = h;
}

INLINE void l7_ids_ac(GLOBAL const uint8_t* msg, uint32_t len, GLOBAL const uint8_t* table,
                      GLOBAL uint32_t* state, GLOBAL uint32_t* out) {
  GLOBAL const uint32_t* trans = (GLOBAL const uint32_t*)(table + IDS_AC_ALPHABET);
  uint32_t s = *state;
  uint32_t n = 0;
  for (uint32_t k = 0; k < len; ++k) {
    const uint32_t e = LOAD_RO(&trans[s + LOAD_RO(&table[msg[k]])]);
    s = e & IDS_AC_STATE_MASK;
    if (e & IDS_AC_MATCH_BIT) {
      if (n < L7_IDS_PAIRS) {
        out[1 + 2 * n] = s;
        out[2 + 2 * n] = k + 1;
      }
      ++n;
    }
  }
  out[0] = n;
  *state = s;
}

// A block as four big-endian words, as FIPS-197 and kernels/common/aes.h take it.
INLINE u32x4 l7_load_block(GLOBAL const uint8_t* p) {
  return make_u32x4(bswap32(load_le32(p)), bswap32(load_le32(p + 4)), bswap32(load_le32(p + 8)),
                    bswap32(load_le32(p + 12)));
}

INLINE void l7_store_word(GLOBAL uint8_t* p, uint32_t w) {
  p[0] = (uint8_t)(w >> 24);
  p[1] = (uint8_t)(w >> 16);
  p[2] = (uint8_t)(w >> 8);
  p[3] = (uint8_t)w;
}

INLINE void l7_store_block(GLOBAL uint8_t* p, u32x4 v) {
  l7_store_word(p, v.x);
  l7_store_word(p + 4, v.y);
  l7_store_word(p + 8, v.z);
  l7_store_word(p + 12, v.w);
}

INLINE u32x4 l7_xor(u32x4 a, u32x4 b) {
  return make_u32x4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// Returns 1 when the message is rejected (bad length or padding).
INLINE uint32_t l7_aes_cbc_decrypt(GLOBAL uint8_t* msg, uint32_t len, GLOBAL const uint8_t* table,
                                   LOCAL const uint32_t* td, LOCAL const uint8_t* isbox,
                                   GLOBAL uint32_t* out) {
  if (len < 2 * L7_AES_BLOCK || (len & (L7_AES_BLOCK - 1u)) != 0) {
    out[1] = 1;
    return 1;
  }
  GLOBAL const uint32_t* dw = (GLOBAL const uint32_t*)table + L7_AES_KEY_WORDS;
  u32x4 prev = l7_load_block(msg);
  for (uint32_t at = L7_AES_BLOCK; at < len; at += L7_AES_BLOCK) {
    const u32x4 c = l7_load_block(msg + at);
    l7_store_block(msg + at, l7_xor(aes_decrypt(td, isbox, dw, AES128_ROUNDS, c), prev));
    prev = c;
  }
  const uint32_t pad = msg[len - 1];
  uint32_t bad = pad == 0 || pad > L7_AES_BLOCK;
  for (uint32_t k = 1; k <= pad && !bad; ++k) bad = msg[len - k] != pad;
  out[0] = bad ? 0 : len - L7_AES_BLOCK - pad;
  out[1] = bad;
  return bad;
}

INLINE uint32_t l7_aes_cbc_encrypt(GLOBAL uint8_t* msg, uint32_t len, GLOBAL const uint8_t* table,
                                   LOCAL const uint32_t* te, GLOBAL uint32_t* out) {
  if (len < L7_AES_BLOCK || (len & (L7_AES_BLOCK - 1u)) != 0) {
    out[1] = 1;
    return 1;
  }
  GLOBAL const uint32_t* w = (GLOBAL const uint32_t*)table;
  u32x4 prev = l7_load_block(msg);
  for (uint32_t at = L7_AES_BLOCK; at < len; at += L7_AES_BLOCK) {
    prev = aes_encrypt(te, w, AES128_ROUNDS, l7_xor(l7_load_block(msg + at), prev));
    l7_store_block(msg + at, prev);
  }
  out[0] = len;
  return 0;
}

KERNEL void l7_chain(GLOBAL uint8_t* RESTRICT bytes, GLOBAL const uint32_t* RESTRICT msgs,
                     GLOBAL const uint32_t* RESTRICT flows, GLOBAL uint8_t* RESTRICT states,
                     GLOBAL const uint32_t* RESTRICT chain, GLOBAL const uint8_t* RESTRICT tables,
                     GLOBAL uint32_t* RESTRICT out, GLOBAL uint8_t* RESTRICT msg_states,
                     uint32_t nops, uint32_t state_stride, uint32_t nflows) {
  LOCAL_MEM uint32_t te[AES_TABLE_ENTRIES];
  LOCAL_MEM uint32_t td[AES_TABLE_ENTRIES];
  LOCAL_MEM uint8_t isbox[AES_TABLE_ENTRIES];
  uint32_t aes = 0;
  for (uint32_t op = 0; op < nops; ++op) {
    const uint32_t code = chain[op * L7_CHAIN_WORDS] & L7_OP_CODE_MASK;
    aes |= code == L7_OP_AES128_CBC_DECRYPT || code == L7_OP_AES128_CBC_ENCRYPT ||
           code == L7_OP_AES128_CBC_GATEWAY;
  }
  if (aes) {  // the same for every work item of the group: the barriers are reached by all
    aes_stage_table(te);
    aes_stage_decrypt_tables(td, isbox);
  }
  const uint32_t f = GLOBAL_ID();
  if (f >= nflows) return;
  const uint32_t first = flows[(size_t)f * L7_FLOW_WORDS];
  const uint32_t count = flows[(size_t)f * L7_FLOW_WORDS + 1];
  GLOBAL uint8_t* state = states + flows[(size_t)f * L7_FLOW_WORDS + 2];
  for (uint32_t m = first; m < first + count; ++m) {
    GLOBAL uint8_t* msg = bytes + msgs[(size_t)m * L7_MSG_WORDS];
    uint32_t len = msgs[(size_t)m * L7_MSG_WORDS + 1];
    const uint32_t response = msgs[(size_t)m * L7_MSG_WORDS + 2] & L7_MSG_RESPONSE;
    GLOBAL uint32_t* mout = out + (size_t)m * nops * L7_OUT_WORDS;
    for (uint32_t w = 0; w < nops * L7_OUT_WORDS; ++w) mout[w] = 0;
    for (uint32_t op = 0; op < nops; ++op) {
      const uint32_t word = chain[op * L7_CHAIN_WORDS];
      if ((word & (response ? L7_ON_RESPONSES : L7_ON_REQUESTS)) == 0u) continue;
      uint32_t code = word & L7_OP_CODE_MASK;
      if (code == L7_OP_AES128_CBC_GATEWAY)
        code = response ? L7_OP_AES128_CBC_ENCRYPT : L7_OP_AES128_CBC_DECRYPT;
      GLOBAL const uint8_t* table = tables + chain[op * L7_CHAIN_WORDS + 1];
      GLOBAL uint8_t* slice = state + chain[op * L7_CHAIN_WORDS + 2];
      GLOBAL uint32_t* o = mout + op * L7_OUT_WORDS;
      uint32_t stop = 0;
      if (code == L7_OP_TOUCH)
        l7_touch(msg, len, (GLOBAL uint32_t*)slice, o);
      else if (code == L7_OP_IDS_AC)
        l7_ids_ac(msg, len, table, (GLOBAL uint32_t*)slice, o);
      else if (code == L7_OP_AES128_CBC_DECRYPT) {
        stop = l7_aes_cbc_decrypt(msg, len, table, td, isbox, o);
        if (!stop) {  // the later ops see the plaintext, as the NF leaves it in the body
          msg += L7_AES_BLOCK;
          len = o[0];
        }
      } else if (code == L7_OP_AES128_CBC_ENCRYPT)
        stop = l7_aes_cbc_encrypt(msg, len, table, te, o);
      if (stop) break;
    }
    GLOBAL uint8_t* snap = msg_states + (size_t)m * state_stride;
    for (uint32_t b = 0; b < state_stride; ++b) snap[b] = state[b];
  }
}
