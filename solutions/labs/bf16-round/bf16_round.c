/* solutions/labs/bf16-round/bf16_round.c: the model solution of the
   rounding lab (Chapter 12). */
#include <math.h>
#include <string.h>

#include "bf16_round.h"

uint16_t round_to_bf16(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)       /* NaN: keep it one */
        return (uint16_t)(bits >> 16 | 0x0040u);
    /* add just under half of bf16's last place, and one more if the kept
       part is odd: a tie then carries exactly when it must, and a carry
       out of the fraction steps the exponent (up to infinity) */
    bits += 0x7fffu + (bits >> 16 & 1u);
    return (uint16_t)(bits >> 16);
}

uint16_t round_to_fp16(float x)
{
    uint16_t sign = signbit(x) ? 0x8000u : 0;
    float a = fabsf(x);
    if (isnan(x))
        return sign | 0x7e00u;                      /* a quiet NaN */
    if (a >= 65520.0f)         /* halfway from 65504 to 2^16, and above */
        return sign | 0x7c00u;
    if (a < 0x1p-14f)           /* subnormal: a multiple of 2^-24; rintf
                                   rounds to nearest, ties to even */
        return sign | (uint16_t)rintf(a * 0x1p24f);
    int e;
    frexpf(a, &e);                             /* a = m 2^e, m in [1/2, 1) */
    float q = ldexpf(1.0f, e - 11);            /* the spacing in a's binade */
    float rounded = rintf(a / q) * q;          /* may step up a binade */
    frexpf(rounded, &e);
    uint16_t fraction = (uint16_t)(ldexpf(rounded, 11 - e) - 1024.0f);
    return sign | (uint16_t)((e - 1 + 15) << 10) | fraction;
}

float fp16_to_float(uint16_t h)
{
    float sign = h & 0x8000u ? -1.0f : 1.0f;
    int exponent = h >> 10 & 0x1f, fraction = h & 0x3ff;
    if (exponent == 0x1f)
        return fraction ? copysignf(NAN, sign) : sign * INFINITY;
    if (exponent == 0)
        return sign * ldexpf((float)fraction, -24);
    return sign * ldexpf((float)(fraction | 0x400), exponent - 25);
}
