// The IDS Aho-Corasick scan's device layout (src/lib/ids/aho_corasick.hh builds the table,
// src/offload/ids_tables.hh reads the results, kernels/ids_ac_scan.cl writes them): transition
// entries carry the target state (premultiplied by the stride) in IDS_AC_STATE_MASK and
// IDS_AC_MATCH_BIT when it has outputs; each packet's result is IDS_AC_RESULT_WORDS words
// {count, then (state, end) for the first IDS_AC_MAX_MATCHES steps}. Plain constants, so the
// host takes its own from here.
#ifndef FULCRUM_KERNELS_COMMON_IDS_AC_LAYOUT_H
#define FULCRUM_KERNELS_COMMON_IDS_AC_LAYOUT_H

#define IDS_AC_MATCH_BIT 0x80000000u
#define IDS_AC_STATE_MASK (IDS_AC_MATCH_BIT - 1u)
#define IDS_AC_ALPHABET 256u
#define IDS_AC_MAX_MATCHES 31u
#define IDS_AC_RESULT_WORDS (1u + 2u * IDS_AC_MAX_MATCHES)

#endif  // FULCRUM_KERNELS_COMMON_IDS_AC_LAYOUT_H
