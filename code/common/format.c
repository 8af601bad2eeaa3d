/* Tangled from chapters/90-plumbing.nw; edit the chapter, not this file. */
#include <math.h>
#include <string.h>

#include "cli.h"

const char *plural(double count, const char *one, const char *many)
{
    return count == 1 ? one : many;
}

static void trim_zeros(char *s)
{
    char *dot = strchr(s, '.');
    if (dot == NULL)
        return;
    char *end = dot + strlen(dot);
    while (end > dot + 1 && end[-1] == '0')
        *--end = '\0';
    if (end == dot + 1)
        *dot = '\0';
}
static int atoi_exponent(const char *s)
{
    int sign = 1, e = 0;
    if (*s == '+' || *s == '-')
        sign = (*s++ == '-') ? -1 : 1;
    while (*s >= '0' && *s <= '9')
        e = 10 * e + (*s++ - '0');
    return sign * e;
}
Text sig(double value, int digits)
{
    Text t;
    if (value == 0 || !isfinite(value)) {      /* 0, inf, nan: as C writes */
        snprintf(t.s, sizeof t.s, "%g", value);
        return t;
    }
    int magnitude = (int)floor(log10(fabs(value)));
    int decimals = digits - 1 - magnitude;
    if (decimals <= 0)
        return grouped(round(value));
    snprintf(t.s, sizeof t.s, "%.*f", decimals, value);
    trim_zeros(t.s);
    if (fabs(value) >= 1000) {          /* 1170.3 is written 1,170.3 */
        Text whole = grouped(trunc(value));
        char *dot = strchr(t.s, '.');
        snprintf(whole.s + strlen(whole.s), sizeof whole.s - strlen(whole.s),
                 "%.20s", dot ? dot : "");
        return whole;
    }
    return t;
}

Text quotient(double value)
{
    int whole = fabs(value - round(value)) <= 1e-9 * fabs(value);
    for (int digits = 5; digits < 12; digits++) {
        Text t = sig(value, digits);
        if (whole || strchr(t.s, '.') != NULL)
            return t;
    }
    return sig(value, 12);
}

Text sci(double value, int digits)
{
    Text t;
    char mantissa[sizeof t.s];
    if (value == 0 || !isfinite(value))       /* not 0e0 */
        return sig(value, digits);
    snprintf(t.s, sizeof t.s, "%.*e", digits - 1, value);
    char *e = strchr(t.s, 'e');
    int exponent = atoi_exponent(e + 1);
    *e = '\0';
    strcpy(mantissa, t.s);
    trim_zeros(mantissa);
    snprintf(t.s, sizeof t.s, "%.30se%d", mantissa, exponent);
    return t;
}

Text eng(double value)
{
    Text t;
    if (value == floor(value) && fabs(value) < 1e6)
        return grouped(value);
    if (value == 0 || (fabs(value) >= 1 && fabs(value) < 1e3))
        return sig(value, 4);
    int exponent = 3 * (int)floor(log10(fabs(value)) / 3);
    Text mantissa = sig(value / pow(10, exponent), 4);
    snprintf(t.s, sizeof t.s, "%.30se%d", mantissa.s, exponent);
    return t;
}
Text grouped(double value)
{
    Text t;
    if (!isfinite(value))
        return sig(value, 3);
    if (fabs(value) >= 1e15 || value != floor(value))
        return fabs(value) >= 1e15 ? sci(value, 3) : sig(value, 3);
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", fabs(value));
    size_t n = strlen(digits), k = 0;
    if (value < 0)
        t.s[k++] = '-';
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            t.s[k++] = ',';
        t.s[k++] = digits[i];
    }
    t.s[k] = '\0';
    return t;
}
Text counted(double count, const char *one, const char *many)
{
    Text t;
    Text n = grouped(count);
    snprintf(t.s, sizeof t.s, "%.24s %.22s", n.s,
             strcmp(n.s, "1") == 0 ? one : many);
    return t;
}
static const char *unit_name(double unit)
{
    if (unit >= 1e15) return "PB";
    if (unit >= 1e12) return "TB";
    if (unit >= 1e9)  return "GB";
    if (unit >= 1e6)  return "MB";
    if (unit >= 1e3)  return "kB";
    return "B";
}

static Text bytes_with_digits(double bytes, double unit, int digits)
{
    Text t;
    Text number = bytes / unit >= 1000 ? grouped(round(bytes / unit))
                                       : sig(bytes / unit, digits);
    snprintf(t.s, sizeof t.s, "%.40s %s", number.s, unit_name(unit));
    return t;
}

Text bytes_in(double bytes, double unit)
{
    return bytes_with_digits(bytes, unit, 4);
}

Text bytes_auto(double bytes)
{
    double unit = 1;
    while (unit < 1e15 && bytes >= unit * 1e3)
        unit *= 1e3;
    return bytes_with_digits(bytes, unit, 3);
}
Text duration(double seconds)
{
    static const struct { double size; const char *name; } units[] = {
        { 1e-6, "us" }, { 1e-3, "ms" }, { 1, "s" }, { 60, "min" },
        { 3600, "h" }, { 86400, "days" }
    };
    /* Each unit serves from one of itself up to the next unit's start;
       minutes start at ten, hours and days at two of them. */
    static const double from[] = { 0, 1e-3, 1, 600, 7200, 172800 };
    Text t;
    if (seconds == 0 || !isfinite(seconds)) {
        snprintf(t.s, sizeof t.s, "%.40s s", sig(seconds, 3).s);
        return t;
    }
    int u = 0;
    while (u + 1 < 6 && fabs(seconds) >= from[u + 1])
        u++;
    snprintf(t.s, sizeof t.s, "%.40s %s",
             sig(seconds / units[u].size, 3).s, units[u].name);
    return t;
}
