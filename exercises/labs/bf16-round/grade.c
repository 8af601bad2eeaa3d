/* exercises/labs/bf16-round/grade.c: the autograder of the rounding lab.

   Every check compares the student's bits with the book's own conversions
   in code/minigpt/number_formats.h (bf16_from_float, fp16_from_float and
   float_from_fp16), on every bf16 and fp16 number, on the points halfway
   between neighbours and just either side of them, on subnormals,
   overflow, infinities and NaNs, and on millions of random fp32 numbers.
   A NaN's answer need only be a NaN of the same sign: formats leave the
   rest of its bits free. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bf16_round.h"
#include "lab_check.h"
#include "number_formats.h"

static float from_bits(uint32_t bits)
{
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static uint32_t random_bits(uint64_t *state)       /* xorshift64* */
{
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (uint32_t)(*state * 0x2545f4914f6cdd1dull >> 32);
}

/* One family of inputs: a check over `count` fp32 bit patterns, the i-th
   made by `input`. */
typedef struct {
    const char *what;
    uint32_t (*input)(uint32_t i, uint64_t *rng);
    uint32_t count;
} Family;

typedef enum { TO_BF16, TO_FP16 } Target;

static int nan16(uint16_t h, Target t)
{
    return t == TO_BF16 ? (h & 0x7f80u) == 0x7f80u && (h & 0x7fu)
                        : (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
}

static void check_family(Target t, const Family *f)
{
    uint64_t rng = 0x9e3779b97f4a7c15ull;
    char failed[200] = "";
    for (uint32_t i = 0; i < f->count && !failed[0]; i++) {
        uint32_t bits = f->input(i, &rng);
        float x = from_bits(bits);
        uint16_t want = t == TO_BF16 ? bf16_from_float(x)
                                     : fp16_from_float(x);
        uint16_t got = t == TO_BF16 ? round_to_bf16(x) : round_to_fp16(x);
        int ok = isnan(x) ? nan16(got, t) && (got >> 15) == (bits >> 31)
                          : got == want;
        if (!ok)
            snprintf(failed, sizeof failed, ": x = %.9g (bits 0x%08x): got "
                     "0x%04x, want 0x%04x%s", (double)x, bits, got, want,
                     isnan(x) ? " (any NaN of that sign)" : "");
    }
    lab_check(!failed[0], "%s: %s (%u inputs)%s",
              t == TO_BF16 ? "round_to_bf16" : "round_to_fp16", f->what,
              f->count, failed);
}

/* ------------------------------------------------------------ bf16 -- */
static uint32_t bf16_exact(uint32_t i, uint64_t *rng)
{
    (void)rng;
    return i << 16;                /* every bf16 number, and its NaNs */
}
/* halfway between bf16 neighbours, and one fp32 step either side */
static uint32_t bf16_halfway(uint32_t i, uint64_t *rng)
{
    (void)rng;
    static const uint32_t low[3] = { 0x8000u, 0x7fffu, 0x8001u };
    return (i / 3) << 16 | low[i % 3];
}
static uint32_t any_fp32(uint32_t i, uint64_t *rng)
{
    (void)i;
    return random_bits(rng);
}
/* fp32's subnormals, below 2^-126: bf16's are the top 7 of their bits */
static uint32_t fp32_subnormal(uint32_t i, uint64_t *rng)
{
    return (i & 1u) << 31 | (random_bits(rng) & 0x007fffffu);
}

/* ------------------------------------------------------------ fp16 -- */
static uint32_t bits_of(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}
static uint32_t fp16_exact(uint32_t i, uint64_t *rng)
{
    (void)rng;
    return bits_of(float_from_fp16((uint16_t)i));
}
/* halfway between fp16 neighbours (exact in fp32), and one fp32 step
   either side; from the largest, halfway to 2^16 */
static uint32_t fp16_halfway(uint32_t i, uint64_t *rng)
{
    (void)rng;
    uint16_t h = (uint16_t)(i / 3);
    float a = float_from_fp16(h);
    float b = (h & 0x7fffu) == 0x7bffu ? copysignf(65536.0f, a)
                                       : float_from_fp16((uint16_t)(h + 1));
    uint32_t mid = bits_of((a + b) / 2);
    if ((h & 0x7c00u) == 0x7c00u || (h & 0x7fffu) == 0x7fffu)
        return bits_of(a);                /* infinity or NaN: itself */
    return i % 3 == 0 ? mid : i % 3 == 1 ? mid - 1 : mid + 1;
}
/* random fp32 numbers whose exponent is within fp16's reach or near it */
static uint32_t fp16_range(uint32_t i, uint64_t *rng)
{
    (void)i;
    uint32_t r = random_bits(rng);
    uint32_t exponent = 127 - 28 + r % 48;           /* 2^-28 .. 2^19 */
    return (r & 0x80000000u) | exponent << 23
         | (random_bits(rng) & 0x007fffffu);
}

static void check_fp16_to_float(void)
{
    char failed[200] = "";
    for (uint32_t i = 0; i < 65536 && !failed[0]; i++) {
        float want = float_from_fp16((uint16_t)i);
        float got = fp16_to_float((uint16_t)i);
        int ok = isnan(want) ? isnan(got) && !signbit(got) == !signbit(want)
                             : bits_of(got) == bits_of(want);
        if (!ok)
            snprintf(failed, sizeof failed, ": 0x%04x: got %.9g, want "
                     "%.9g", i, (double)got, (double)want);
    }
    lab_check(!failed[0], "fp16_to_float: every one of the 65536 fp16 bit "
              "patterns = float_from_fp16%s", failed);
}

int main(void)
{
    const Family bf16[] = {
        { "every bf16 number, +-0, +-inf and NaNs, to itself", bf16_exact,
          65536 },
        { "halfway between bf16 neighbours (ties to even; the largest to "
          "inf) and one fp32 step either side", bf16_halfway, 3 * 65536 },
        { "fp32's subnormals", fp32_subnormal, 1u << 20 },
        { "random fp32 bit patterns", any_fp32, 1u << 22 },
    };
    for (size_t i = 0; i < sizeof bf16 / sizeof bf16[0]; i++)
        check_family(TO_BF16, &bf16[i]);
    const Family fp16[] = {
        { "every fp16 number, +-0, +-inf and NaNs, to itself", fp16_exact,
          65536 },
        { "halfway between fp16 neighbours (subnormals, ties to even, "
          "65520 to inf) and one fp32 step either side", fp16_halfway,
          3 * 65536 },
        { "random fp32 numbers from 2^-28 to 2^19", fp16_range, 1u << 22 },
        { "random fp32 bit patterns (mostly overflow and underflow)",
          any_fp32, 1u << 20 },
    };
    for (size_t i = 0; i < sizeof fp16 / sizeof fp16[0]; i++)
        check_family(TO_FP16, &fp16[i]);
    check_fp16_to_float();
    return lab_finish("bf16-round");
}
