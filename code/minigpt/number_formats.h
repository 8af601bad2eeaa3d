/* Tangled from chapters/12-precision.nw and chapters/99gp-precision-plumbing.nw; edit the chapters, not this file. */
#ifndef NUMBER_FORMATS_H
#define NUMBER_FORMATS_H
/* The number formats of Chapter 12, and rounding to them: round to
   nearest, ties to even, with each format's range. Every function is
   usable on the CPU and, compiled by nvcc, on the GPU. */
#include <stdint.h>
#include <string.h>
#ifdef __CUDACC__
#define HOST_DEVICE __host__ __device__
#else
#include <math.h>
#define HOST_DEVICE
#endif

typedef enum {
    FORMAT_FP32, FORMAT_BF16, FORMAT_FP16, FORMAT_E4M3, FORMAT_E5M2,
    NUMBER_FORMATS
} NumberFormat;

typedef struct {
    int exponent_bits;      /* E                                         */
    int mantissa_bits;      /* M, the fraction: p = M + 1 significant     */
    int bias;               /* 2^(E-1) - 1                                */
    int ieee;               /* 1: the all-ones exponent is inf and NaN;
                               0 (E4M3): numbers, but S.1111.111, NaN     */
} FormatBits;

static inline HOST_DEVICE FormatBits format_bits(NumberFormat f)
{
    FormatBits b;
    b.exponent_bits = f == FORMAT_FP32 || f == FORMAT_BF16 ? 8
                    : f == FORMAT_E4M3 ? 4 : 5;
    b.mantissa_bits = f == FORMAT_FP32 ? 23 : f == FORMAT_BF16 ? 7
                    : f == FORMAT_FP16 ? 10 : f == FORMAT_E4M3 ? 3 : 2;
    b.bias = (1 << (b.exponent_bits - 1)) - 1;
    b.ieee = f != FORMAT_E4M3;
    return b;
}
/* The largest exponent of a normal number: the all-ones exponent is
   infinity's in IEEE's formats and E4M3's largest binade. */
static inline HOST_DEVICE int format_emax(NumberFormat f)
{
    FormatBits b = format_bits(f);
    return (1 << b.exponent_bits) - (b.ieee ? 2 : 1) - b.bias;
}

static inline HOST_DEVICE float format_largest(NumberFormat f)
{
    FormatBits b = format_bits(f);      /* E4M3: 1.110, one short of NaN */
    float fraction = b.ieee ? 2.0f - ldexpf(1.0f, -b.mantissa_bits)
                            : 2.0f - ldexpf(1.0f, 1 - b.mantissa_bits);
    return ldexpf(fraction, format_emax(f));
}

static inline HOST_DEVICE float format_smallest_normal(NumberFormat f)
{
    return ldexpf(1.0f, 1 - format_bits(f).bias);
}

static inline HOST_DEVICE float format_smallest_subnormal(NumberFormat f)
{
    FormatBits b = format_bits(f);
    return ldexpf(1.0f, 1 - b.bias - b.mantissa_bits);
}

/* u = 2^-p: rounding changes a normal number by at most u of itself. */
static inline HOST_DEVICE double format_unit_roundoff(NumberFormat f)
{
    return ldexp(1.0, -(format_bits(f).mantissa_bits + 1));
}
/* x rounded to format f (not fp32), as the format's bits: sign, exponent,
   fraction, in the low 1 + E + M bits. */
static inline HOST_DEVICE uint32_t format_encode(float x, NumberFormat f)
{
    FormatBits b = format_bits(f);
    int M = b.mantissa_bits, emin = 1 - b.bias, e;
    uint32_t ones = (1u << b.exponent_bits) - 1;          /* all ones */
    uint32_t sign = signbit(x) ? 1u << (b.exponent_bits + M) : 0;
    uint32_t nan = b.ieee ? sign | ones << M | 1u << (M - 1)   /* quiet */
                          : sign | ones << M | ((1u << M) - 1);
    uint32_t inf = b.ieee ? sign | ones << M : nan;
    float a = fabsf(x);
    if (isnan(x))
        return nan;
    if (isinf(a))
        return inf;
    frexpf(a, &e);                       /* a = m 2^e with m in [1/2, 1) */
    e = e - 1 < emin ? emin : e - 1;     /* a's binade, or the subnormals' */
    float q = ldexpf(1.0f, e - M);       /* the format's spacing there     */
    float rounded = rintf(a / q) * q;    /* nearest, ties to even          */
    if (rounded > format_largest(f))
        return inf;                      /* overflow: E4M3's is NaN        */
    if (rounded < ldexpf(1.0f, emin))    /* subnormal, or zero             */
        return sign | (uint32_t)(rounded / ldexpf(1.0f, emin - M));
    frexpf(rounded, &e);
    uint32_t fraction = (uint32_t)(rounded / ldexpf(1.0f, e - 1 - M));
    return sign | (uint32_t)(e - 1 + b.bias) << M
                | (fraction - (1u << M));
}

/* The number that format f's bits stand for. */
static inline HOST_DEVICE float format_decode(uint32_t bits, NumberFormat f)
{
    FormatBits b = format_bits(f);
    int M = b.mantissa_bits;
    uint32_t ones = (1u << b.exponent_bits) - 1;
    uint32_t exponent = bits >> M & ones, fraction = bits & ((1u << M) - 1);
    float sign = bits >> (b.exponent_bits + M) & 1 ? -1.0f : 1.0f;
    if (exponent == ones && (b.ieee || fraction == (1u << M) - 1))
        return b.ieee && fraction == 0 ? sign * INFINITY
                                       : copysignf(NAN, sign);
    if (exponent == 0)                   /* subnormal, or zero */
        return sign * ldexpf((float)fraction, 1 - b.bias - M);
    return sign * ldexpf((float)(fraction | 1u << M),
                         (int)exponent - b.bias - M);
}
static inline HOST_DEVICE uint16_t bf16_from_float(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u)      /* NaN: sign kept, quiet */
        return (uint16_t)(bits >> 16 | 0x0040u);
    bits += 0x7fffu + (bits >> 16 & 1u);         /* nearest, ties to even */
    return (uint16_t)(bits >> 16);
}

static inline HOST_DEVICE float float_from_bf16(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}
/* The bits of x in format f (fp32: its own). */
static inline HOST_DEVICE uint32_t format_bits_of(float x, NumberFormat f)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    return f == FORMAT_FP32 ? bits
         : f == FORMAT_BF16 ? bf16_from_float(x) : format_encode(x, f);
}

/* fp16's nearest number: fp32's bits rounded at fp16's last place when
   the result is normal and finite (2^-14 <= |x| < 65520), as bf16's are;
   the general way otherwise. */
static inline HOST_DEVICE float fp16_round(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude < 0x38800000u || magnitude >= 0x477ff000u)
        return format_decode(format_encode(x, FORMAT_FP16), FORMAT_FP16);
    bits += 0x0fffu + (bits >> 13 & 1u);         /* nearest, ties to even */
    bits &= ~0x1fffu;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* The number of format f nearest to x, ties to even. */
static inline HOST_DEVICE float round_to_format(float x, NumberFormat f)
{
    return f == FORMAT_FP32 ? x
         : f == FORMAT_BF16 ? float_from_bf16(bf16_from_float(x))
         : f == FORMAT_FP16 ? fp16_round(x)
         : format_decode(format_encode(x, f), f);
}
static inline HOST_DEVICE uint16_t fp16_from_float(float x)
{
    return (uint16_t)format_encode(x, FORMAT_FP16);
}

static inline HOST_DEVICE float float_from_fp16(uint16_t h)
{
    return format_decode(h, FORMAT_FP16);
}
/* The scale of a tensor whose largest magnitude is amax, for format f:
   the largest power of two s with amax s <= f's largest number, so that
   dividing it out again is exact. 1 for a tensor of zeros, or one that
   holds an infinity or a NaN. */
static inline HOST_DEVICE float format_tensor_scale(float amax,
                                                    NumberFormat f)
{
    int e_amax, e_largest;
    if (!(amax > 0) || isinf(amax))
        return 1.0f;
    float m_amax = frexpf(amax, &e_amax);       /* amax = m 2^e, m in   */
    float m_largest = frexpf(format_largest(f), &e_largest); /* [1/2,1) */
    int e = e_largest - e_amax - (m_amax > m_largest);
    e = e > 127 ? 127 : e < -126 ? -126 : e;    /* fp32's normal range  */
    return ldexpf(1.0f, e);
}

/* x times the scale, rounded to f, saturating: a finite number beyond
   f's largest becomes the largest, with its sign, never an infinity or
   a NaN; an infinity or a NaN stays what format_encode makes of it. */
static inline HOST_DEVICE uint32_t format_encode_scaled(float x,
                                                        float scale,
                                                        NumberFormat f)
{
    float largest = format_largest(f), y = x * scale;
    if (isfinite(x))
        y = y > largest ? largest : y < -largest ? -largest : y;
    return format_encode(y, f);
}
/* The number of format f nearest to x times the scale, saturated: what
   format_decode(format_encode_scaled(x, scale, f), f) gives, faster. */
static inline HOST_DEVICE float format_round_scaled(float x, float scale,
                                                    NumberFormat f)
{
    float largest = format_largest(f), y = x * scale;
    int drop = 23 - format_bits(f).mantissa_bits;  /* fp32's extra bits */
    uint32_t bits;
    if (isfinite(x))
        y = y > largest ? largest : y < -largest ? -largest : y;
    if (!(fabsf(y) >= format_smallest_normal(f)) || isinf(y))
        return format_decode(format_encode(y, f), f);  /* and NaN, 0 */
    memcpy(&bits, &y, sizeof bits);
    uint32_t below_half = (1u << (drop - 1)) - 1;
    bits += below_half + (bits >> drop & 1u);     /* nearest, ties to even */
    bits &= ~((1u << drop) - 1);
    memcpy(&y, &bits, sizeof y);
    return y;
}
/* To first order, the relative error of a result that passes through
   `gemms` GEMMs whose inputs are rounded to format f: 2u each. */
static inline double format_gemm_tolerance(int gemms, NumberFormat f)
{
    return gemms * 2 * format_unit_roundoff(f);
}
#endif
