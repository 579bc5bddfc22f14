// The L7 chain kernel's ops (kernels/l7_chain.cl runs a flow's messages through a chain of them,
// one work item per flow, FlowShader's flow-level parallelism, paper 004 §III-C/E). Each L7 NF
// with a device form (src/l7/nf/nf.hh, FlowNf::device_op) names one op and supplies its table in
// the layout below; the host (src/l7/flow) reads the output words back and the NF turns them into
// its verdict (FlowNf::finish_device). Plain constants, so host and device take theirs from here.
//
// Per op and message the kernel has: the message bytes (read, and rewritten in place by ops
// that transform), the op's slice of the flow state (read and written, carried across messages
// and batches), the op's table (read only) and L7_OUT_WORDS output words (zeroed before the op).
#ifndef FULCRUM_KERNELS_COMMON_L7_OPS_H
#define FULCRUM_KERNELS_COMMON_L7_OPS_H

#define L7_MAX_OPS 8u
#define L7_OUT_WORDS 64u

// Reads every byte: state uint32 rolling FNV-1a of the flow's bytes so far; out[0] = that hash
// after the message. No table. The "bare" NF of the benchmarks and the chain tests.
#define L7_OP_TOUCH 1u

// Stream IDS content prefilter with the DFA state carried across messages (the flow's bytes are
// one stream). Table: uint8 classes[IDS_AC_ALPHABET], then the transition table as uint32
// entries (kernels/common/ids_ac_layout.h, padded so the table starts 4-byte aligned at offset
// IDS_AC_ALPHABET). State: uint32 DFA state (premultiplied entry, 0 at flow start).
// Out: [0] = number of steps into a state with outputs in this message; then (state, end) pairs
// for the first (L7_OUT_WORDS - 1) / 2 of them, `end` one past the match within this message.
// More steps than fit: the NF rescans the message on the CPU from the state it started in.
#define L7_OP_IDS_AC 2u

// AES-128-CBC with PKCS#7 padding (the web security gateway). Table: 44 uint32 encryption round
// keys then 44 uint32 decryption round keys (FIPS-197 expansion, words big-endian as in
// kernels/common/aes.h). The decryption keys are those of FIPS-197 §5.3.5's equivalent inverse
// cipher: the encryption schedule with InvMixColumns applied to rounds 1..9, in the same order
// (src/l7/flow/device_tables.hh builds the table). State: none.
// DECRYPT: the message is IV (16 bytes) || ciphertext (a multiple of 16); decrypted in place
//   (plaintext at offset 16); out[0] = plaintext length after unpadding, out[1] = 1 when the
//   length or padding is bad (then the message is left undefined and the NF rejects it). The
//   chain's later ops see the plaintext only (offset 16, out[0] bytes).
// ENCRYPT: the host has written IV || plaintext || PKCS#7 padding; the kernel encrypts from
//   offset 16 in place; out[0] = ciphertext length with the IV; out[1] = 1 when the length is
//   not 16 plus a multiple of 16 (nothing encrypted).
// An op that sets out[1] = 1 ends the chain for that message on the device (the later ops'
// outputs stay zero and their state untouched), as the CPU chain stops at the NF's verdict.
#define L7_OP_AES128_CBC_DECRYPT 3u
#define L7_OP_AES128_CBC_ENCRYPT 4u

// The web security gateway both ways in one op: a request is DECRYPTed and a response
// ENCRYPTed, as above, with the same table.
#define L7_OP_AES128_CBC_GATEWAY 5u

// The chain's op word holds the code in L7_OP_CODE_MASK and the directions the op runs on above
// it; a message of another direction passes the op untouched (zero output, state unchanged).
// A message's direction is the top bit of its flow word (set: a response).
#define L7_OP_CODE_MASK 0xffffu
#define L7_ON_REQUESTS 0x10000u
#define L7_ON_RESPONSES 0x20000u
#define L7_MSG_RESPONSE 0x80000000u

#endif  // FULCRUM_KERNELS_COMMON_L7_OPS_H
