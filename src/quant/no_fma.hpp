// Turns off floating-point contraction for the rest of the including file:
// the reference codecs round every a*b+c twice, as ggml's reference build
// does, so they give the same bytes on every platform. The build passes
// -ffp-contract=off too; this keeps a codec exact when built without it.
// Include it last, before the code, in .cpp files only.
#pragma once

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif
