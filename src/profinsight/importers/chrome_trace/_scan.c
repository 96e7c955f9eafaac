/* The event array of a Chrome trace, read into columns without a Python object per event.

   Why: DuckDB's JSON reader, which the import uses otherwise, takes 0.66-0.73 s of CPU for the
   event-level columns of a 100 MB Kineto trace; one walk over the same bytes here takes about a
   third of that, and a trace is cut into parts read on several threads.  The caller names the
   keys to read and the kind of each, and gets the values DuckDB's reader gives them, so the SQL
   after the read is unchanged:

   - KIND_TEXT (VARCHAR): a JSON string is decoded (every escape, surrogate pairs joined); a
     number, ``true`` or ``false`` is its text; ``null`` or an absent key is NULL;
   - KIND_DECIMAL3 (``DECIMAL(38,3)``): the number times 1000 as an integer, its stored value;
   - KIND_JSON (JSON): an object as DuckDB's JSON type stores it, minified;
   - KIND_ENTRIES (``STRUCT(key VARCHAR, value VARCHAR)[]``, two column slots: the keys, then
     KIND_ENTRY_VALUES, the values): the key/value pairs of an object whose values are all
     scalars, as ``map_entries(json_transform(x, '"MAP(VARCHAR, VARCHAR)"'))`` gives them --
     read only for the events whose text column ``when_col`` says ``when_val`` (the counter
     events of a trace), after the event's last key (``ph`` may follow ``args``).  Where that
     conversion would give something else (a nested value, a number it re-renders, a key with an
     escape or written twice) the row's entries are NULL, not a fallback: the caller's SQL then
     converts that one object itself.

   Where DuckDB would write a value differently than the file does (a number it re-renders,
   ``1.50`` or ``1e5``; an escape it decodes inside an object, ``\u00e9``; more than three
   decimals of a DECIMAL3), and on anything that is not valid JSON or not an array of objects,
   the scan stops and says so (PI_FALLBACK): the caller reads the file with DuckDB as before,
   so such a file costs what it always did and nothing is read differently.

   One pass; the columns grow (realloc) and belong to the caller until it calls pi_free.  No
   global state: parts of one array are scanned on several threads at once, each into its own
   pi_out, and the caller releases the GIL (ctypes does).  */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI_FALLBACK (-1)
#define PI_NO_MEMORY (-2)
#define MAX_DEPTH 64
#define MAX_COLS 16

enum { KIND_TEXT = 0, KIND_DECIMAL3 = 1, KIND_JSON = 2, KIND_ENTRIES = 3, KIND_ENTRY_VALUES = 4 };
/* entries of one object at most (their keys are compared with each other) */
#define MAX_ENTRIES 64

/* The columns to read (set by the caller) and what a scan read into them: per column
   ``offsets`` (rows + 1) and ``data`` for text and JSON columns, ``values`` for decimal ones,
   ``valid`` (one byte per row) for every column.  A KIND_ENTRIES column ``e`` keeps its per-row
   validity in ``valid[e]`` and its list offsets (rows + 1, counted in entries) in ``values[e]``;
   per entry, the keys are ``offsets[e]`` / ``data[e]`` and the values ``offsets[e + 1]`` /
   ``data[e + 1]`` / ``valid[e + 1]`` (``entries[e]`` of them). */
typedef struct {
    int32_t ncols;
    int32_t kinds[MAX_COLS];
    const char *keys[MAX_COLS];
    int64_t key_lens[MAX_COLS];
    int64_t rows;
    int64_t bytes[MAX_COLS];
    int64_t *offsets[MAX_COLS];
    uint8_t *data[MAX_COLS];
    int64_t *values[MAX_COLS];
    uint8_t *valid[MAX_COLS];
    int64_t stopped_at; /* where a scan that gave up was: the start of the event it read */
    int64_t cap_rows;
    int64_t cap_bytes[MAX_COLS];
    int32_t when_col[MAX_COLS]; /* KIND_ENTRIES: the text column that says which events have them */
    const char *when_val[MAX_COLS];
    int64_t when_len[MAX_COLS];
    int64_t entries[MAX_COLS];
    int64_t cap_entries[MAX_COLS];
} pi_out;

typedef struct {
    const uint8_t *p, *end;
    pi_out *o;
    int no_memory;
    const uint8_t *start; /* where the part begins: how much of it was read, for the sizes below */
    /* per column c: the KIND_ENTRIES column that reads the same key (-1: none); and whether an
       entries column reads a key no other column does (its key is then compared on every key) */
    int8_t entries_of[MAX_COLS];
    int lone_entries;
} scan;

/* --- output ------------------------------------------------------------------------------ */

/* What a column (or the rows) will need by the end of the part at the rate it grew so far, an
   eighth more for the events still to come differing: a part's events are much alike, so a column
   grows once or twice to its size instead of doubling a dozen times, each time copying what it
   held into fresh pages (a cold scan of a 100 MB trace: 61 k -> 45 k page faults, 0.20 -> 0.17 s
   of CPU).  Never more than the part's bytes (a column never holds more: each value comes from
   bytes of its own), never less than doubling would give. */
static int64_t expected(const scan *s, int64_t held, int64_t cap) {
    int64_t done = s->p - s->start, total = s->end - s->start;
    int64_t at_least = cap * 2;
    if (done <= 0 || total <= done || held <= 0) return at_least;
    double guess = (double)held * ((double)total / (double)done) * 1.125;
    if (guess > (double)total) guess = (double)total;
    return guess > (double)at_least ? (int64_t)guess : at_least;
}

static int grow_bytes(scan *s, int c, int64_t need) {
    pi_out *o = s->o;
    int64_t cap = o->cap_bytes[c] ? expected(s, o->bytes[c], o->cap_bytes[c]) : 1 << 16;
    while (cap < need) cap *= 2;
    uint8_t *d = realloc(o->data[c], (size_t)cap);
    if (!d) { s->no_memory = 1; return PI_FALLBACK; }
    o->data[c] = d;
    o->cap_bytes[c] = cap;
    return 0;
}

/* Append n bytes to column c (c < 0: a value only checked, nothing kept). */
static inline int put(scan *s, int c, const void *src, int64_t n) {
    if (c < 0) return 0;
    pi_out *o = s->o;
    if (o->bytes[c] + n > o->cap_bytes[c] && grow_bytes(s, c, o->bytes[c] + n)) return PI_FALLBACK;
    uint8_t *w = o->data[c] + o->bytes[c];
    if (n <= 16) { /* most pieces are short: a byte loop beats a call */
        const uint8_t *r = src;
        for (int64_t i = 0; i < n; i++) w[i] = r[i];
    } else {
        memcpy(w, src, (size_t)n);
    }
    o->bytes[c] += n;
    return 0;
}

static inline int put1(scan *s, int c, uint8_t b) { return put(s, c, &b, 1); }

static int grow_rows(scan *s) {
    pi_out *o = s->o;
    int64_t cap = o->cap_rows ? expected(s, o->rows, o->cap_rows) : 1 << 14;
    for (int c = 0; c < o->ncols; c++) {
        if (o->kinds[c] == KIND_ENTRY_VALUES) continue; /* sized by entries (grow_entries) */
        uint8_t *v = realloc(o->valid[c], (size_t)cap);
        if (!v) { s->no_memory = 1; return PI_FALLBACK; }
        o->valid[c] = v;
        if (o->kinds[c] == KIND_DECIMAL3 || o->kinds[c] == KIND_ENTRIES) {
            int64_t n = o->kinds[c] == KIND_ENTRIES ? cap + 1 : cap; /* list offsets: rows + 1 */
            int64_t *x = realloc(o->values[c], (size_t)n * sizeof(int64_t));
            if (!x) { s->no_memory = 1; return PI_FALLBACK; }
            o->values[c] = x;
        } else {
            int64_t *x = realloc(o->offsets[c], (size_t)(cap + 1) * sizeof(int64_t));
            if (!x) { s->no_memory = 1; return PI_FALLBACK; }
            o->offsets[c] = x;
        }
    }
    o->cap_rows = cap;
    return 0;
}

/* Room for more entries of the KIND_ENTRIES column e: key and value offsets, value validity. */
static int grow_entries(scan *s, int e) {
    pi_out *o = s->o;
    int64_t cap = o->cap_entries[e] ? o->cap_entries[e] * 2 : 1 << 12;
    int64_t *k = realloc(o->offsets[e], (size_t)(cap + 1) * sizeof(int64_t));
    if (!k) { s->no_memory = 1; return PI_FALLBACK; }
    o->offsets[e] = k;
    int64_t *v = realloc(o->offsets[e + 1], (size_t)(cap + 1) * sizeof(int64_t));
    if (!v) { s->no_memory = 1; return PI_FALLBACK; }
    o->offsets[e + 1] = v;
    uint8_t *ok = realloc(o->valid[e + 1], (size_t)cap);
    if (!ok) { s->no_memory = 1; return PI_FALLBACK; }
    o->valid[e + 1] = ok;
    o->cap_entries[e] = cap;
    return 0;
}

/* --- JSON --------------------------------------------------------------------------------- */

/* 1 for a byte that stands for itself inside a string: printable ASCII but the quote and the
   backslash */
static const uint8_t PLAIN[256] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

static inline void ws(scan *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t')) s->p++;
}

static inline int hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(const uint8_t *q, const uint8_t *end, uint32_t *out) {
    if (end - q < 4) return -1;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(q[i]);
        if (h < 0) return -1;
        v = (v << 4) | (uint32_t)h;
    }
    *out = v;
    return 0;
}

/* Length of the valid UTF-8 sequence at q (first byte >= 0x80), or 0 if invalid. */
static int utf8_len(const uint8_t *q, const uint8_t *end) {
    uint8_t c = q[0];
    int n;
    uint32_t min;
    if (c >= 0xC2 && c <= 0xDF) { n = 2; min = 0x80; }
    else if (c >= 0xE0 && c <= 0xEF) { n = 3; min = 0x800; }
    else if (c >= 0xF0 && c <= 0xF4) { n = 4; min = 0x10000; }
    else return 0;
    if (end - q < n) return 0;
    uint32_t cp = c & (0xFF >> (n + 1));
    for (int i = 1; i < n; i++) {
        if ((q[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (q[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return n;
}

static int put_utf8(scan *s, int c, uint32_t cp) {
    uint8_t b[4];
    int n;
    if (cp < 0x80) { b[0] = (uint8_t)cp; n = 1; }
    else if (cp < 0x800) { b[0] = 0xC0 | (cp >> 6); b[1] = 0x80 | (cp & 0x3F); n = 2; }
    else if (cp < 0x10000) { b[0] = 0xE0 | (cp >> 12); b[1] = 0x80 | ((cp >> 6) & 0x3F); b[2] = 0x80 | (cp & 0x3F); n = 3; }
    else { b[0] = 0xF0 | (cp >> 18); b[1] = 0x80 | ((cp >> 12) & 0x3F); b[2] = 0x80 | ((cp >> 6) & 0x3F); b[3] = 0x80 | (cp & 0x3F); n = 4; }
    return put(s, c, b, n);
}

/* A string at s->p (on the opening quote), into column c (c < 0: only checked).  decode: its
   value with every escape decoded.  Otherwise (inside a JSON value): the string as written,
   quotes included, which must be what DuckDB's JSON writer gives back -- escapes only of a quote,
   a backslash, \n, \r or \t.  Raw UTF-8 is checked; a raw control character is invalid JSON. */
static int string(scan *s, int c, int decode) {
    const uint8_t *q = s->p + 1, *end = s->end;
    if (!decode && put1(s, c, '"')) return PI_FALLBACK;
    for (;;) {
        const uint8_t *r = q; /* a run of plain ASCII bytes */
        while (r < end && PLAIN[*r]) r++;
        if (r > q && put(s, c, q, r - q)) return PI_FALLBACK;
        q = r;
        if (q >= end) return PI_FALLBACK;
        uint8_t b = *q;
        if (b == '"') { q++; break; }
        if (b < 0x20) return PI_FALLBACK;
        if (b >= 0x80) {
            int k = utf8_len(q, end);
            if (!k || put(s, c, q, k)) return PI_FALLBACK;
            q += k;
            continue;
        }
        /* a backslash */
        if (q + 1 >= end) return PI_FALLBACK;
        uint8_t e = q[1];
        if (!decode) {
            if (e != '"' && e != '\\' && e != 'n' && e != 'r' && e != 't') return PI_FALLBACK;
            if (put(s, c, q, 2)) return PI_FALLBACK;
            q += 2;
            continue;
        }
        uint32_t cp;
        switch (e) {
            case '"': cp = '"'; q += 2; break;
            case '\\': cp = '\\'; q += 2; break;
            case '/': cp = '/'; q += 2; break;
            case 'b': cp = '\b'; q += 2; break;
            case 'f': cp = '\f'; q += 2; break;
            case 'n': cp = '\n'; q += 2; break;
            case 'r': cp = '\r'; q += 2; break;
            case 't': cp = '\t'; q += 2; break;
            case 'u':
                if (read_hex4(q + 2, end, &cp)) return PI_FALLBACK;
                q += 6;
                if (cp >= 0xD800 && cp <= 0xDBFF) {
                    uint32_t lo;
                    if (end - q < 6 || q[0] != '\\' || q[1] != 'u' || read_hex4(q + 2, end, &lo) || lo < 0xDC00 ||
                        lo > 0xDFFF)
                        return PI_FALLBACK;
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    q += 6;
                } else if ((cp >= 0xDC00 && cp <= 0xDFFF) || cp == 0) {
                    return PI_FALLBACK; /* a lone low surrogate; a NUL inside a value */
                }
                break;
            default:
                return PI_FALLBACK;
        }
        if (put_utf8(s, c, cp)) return PI_FALLBACK;
    }
    if (!decode && put1(s, c, '"')) return PI_FALLBACK;
    s->p = q;
    return 0;
}

/* The kinds of number, by how DuckDB gives its text back. */
enum { NUM_INVALID = 0, NUM_KEEP, NUM_OTHER };

/* Whether the decimal literal q[0:len] (sig significant digits, 16 or 17 of them) is the
   shortest text that reads back as its double, as DuckDB writes a double: no shorter precision
   gives the same double, and the correctly rounded one of its own length has its digits. */
static int shortest(const uint8_t *q, int64_t len, const char *digits, int sig) {
    char text[64], back[40];
    if (len >= (int64_t)sizeof text) return 0;
    memcpy(text, q, (size_t)len);
    text[len] = 0;
    char *stop;
    double d = strtod(text, &stop);
    if (stop != text + len) return 0; /* not read whole (a locale with another decimal point) */
    for (int p = 15; p < sig; p++) {
        snprintf(back, sizeof back, "%.*e", p - 1, d);
        if (strtod(back, NULL) == d) return 0;
    }
    snprintf(back, sizeof back, "%.*e", sig - 1, d);
    const char *b = back[0] == '-' ? back + 1 : back;
    for (int i = 0, j = 0; i < sig; i++, j++) {
        if (b[j] == '.') j++;
        if (b[j] != digits[i]) return 0;
    }
    return 1;
}

/* A JSON number at s->p, and how DuckDB gives its text back.  NUM_KEEP: as a prefix of what is
   written, which ends at *canon -- an integer (not -0) as written; a
   decimal in plain notation, zero or between 1e-4 and 1e15, without the zeros that end its
   fraction (``79.250`` -> ``79.25``, ``2.000`` -> ``2.0``), if those are the shortest digits that
   read back as its double (always so up to 15 significant digits).  NUM_OTHER: valid, but it
   may come back in another form. */
static int number(scan *s, const uint8_t **canon) {
    const uint8_t *q = s->p, *end = s->end, *start = s->p;
    int neg = 0;
    if (q < end && *q == '-') { neg = 1; q++; }
    if (q >= end) return NUM_INVALID;
    const uint8_t *ip = q;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') { while (q < end && *q >= '0' && *q <= '9') q++; }
    else return NUM_INVALID;
    int int_digits = (int)(q - ip);
    int plain = 1;
    int frac_digits = 0;
    const uint8_t *fp = NULL;
    if (q < end && *q == '.') {
        q++;
        fp = q;
        while (q < end && *q >= '0' && *q <= '9') q++;
        frac_digits = (int)(q - fp);
        if (!frac_digits) return NUM_INVALID;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        const uint8_t *ep = q;
        while (q < end && *q >= '0' && *q <= '9') q++;
        if (q == ep) return NUM_INVALID;
        plain = 0;
    }
    s->p = q;
    *canon = q;
    if (!plain) return NUM_OTHER;
    int zero_int = int_digits == 1 && *ip == '0';
    if (!fp) return neg && zero_int ? NUM_OTHER : NUM_KEEP; /* past 64 bits DuckDB keeps the text */
    /* a decimal: its fraction without the zeros it ends in, ".0" if nothing else is left */
    while (frac_digits > 1 && fp[frac_digits - 1] == '0') frac_digits--;
    int zero_fraction = fp[frac_digits - 1] == '0'; /* only when frac_digits == 1 */
    *canon = fp + frac_digits;
    char digits[20];
    int sig;
    if (zero_int) {
        if (zero_fraction) return neg ? NUM_OTHER : NUM_KEEP; /* 0.0 (-0.0 may keep its sign) */
        /* 0.xxx: at least 1e-4, so at most three zeros after the point */
        int lead = 0;
        while (fp[lead] == '0') lead++;
        if (lead > 3) return NUM_OTHER;
        sig = frac_digits - lead;
        if (sig <= 0 || sig > 17) return NUM_OTHER;
        memcpy(digits, fp + lead, (size_t)sig);
    } else {
        if (int_digits > 15) return NUM_OTHER;
        sig = int_digits + (zero_fraction ? 0 : frac_digits);
        if (sig > 17) return NUM_OTHER;
        memcpy(digits, ip, (size_t)int_digits);
        if (!zero_fraction) memcpy(digits + int_digits, fp, (size_t)frac_digits);
        /* the integer part's own zeros end the digits when the fraction is .0: 1200.0 has 2 */
        if (zero_fraction) while (sig > 1 && digits[sig - 1] == '0') sig--;
    }
    if (sig <= 15) return NUM_KEEP;
    return shortest(start, *canon - start, digits, sig) ? NUM_KEEP : NUM_OTHER;
}

static int literal(scan *s, const char *word, int len) {
    if (s->end - s->p < len || memcmp(s->p, word, (size_t)len)) return PI_FALLBACK;
    s->p += len;
    return 0;
}

/* Any JSON value at s->p, copied minified into column c -- or, when c < 0, only checked to be
   valid JSON (the value of a key the caller does not read; any escape, any number). */
static int value(scan *s, int c, int depth) {
    if (depth > MAX_DEPTH) return PI_FALLBACK;
    ws(s);
    if (s->p >= s->end) return PI_FALLBACK;
    uint8_t b = *s->p;
    if (b == '"') return string(s, c, c < 0);
    if (b == '{' || b == '[') {
        uint8_t close = b == '{' ? '}' : ']';
        if (put1(s, c, b)) return PI_FALLBACK;
        s->p++;
        ws(s);
        if (s->p < s->end && *s->p == close) {
            s->p++;
            return put1(s, c, close);
        }
        for (;;) {
            ws(s);
            if (b == '{') {
                if (s->p >= s->end || *s->p != '"' || string(s, c, c < 0)) return PI_FALLBACK;
                ws(s);
                if (s->p >= s->end || *s->p != ':') return PI_FALLBACK;
                s->p++;
                if (put1(s, c, ':')) return PI_FALLBACK;
            }
            if (value(s, c, depth + 1)) return PI_FALLBACK;
            ws(s);
            if (s->p >= s->end) return PI_FALLBACK;
            if (*s->p == ',') {
                s->p++;
                if (put1(s, c, ',')) return PI_FALLBACK;
                continue;
            }
            if (*s->p != close) return PI_FALLBACK;
            s->p++;
            return put1(s, c, close);
        }
    }
    if (b == '-' || (b >= '0' && b <= '9')) {
        const uint8_t *start = s->p, *canon;
        int k = number(s, &canon);
        if (k == NUM_INVALID || (c >= 0 && k != NUM_KEEP)) return PI_FALLBACK;
        return put(s, c, start, canon - start);
    }
    const char *word = b == 't' ? "true" : b == 'f' ? "false" : b == 'n' ? "null" : NULL;
    if (!word) return PI_FALLBACK;
    int len = (int)strlen(word);
    if (literal(s, word, len)) return PI_FALLBACK;
    return put(s, c, word, len);
}

/* --- events ------------------------------------------------------------------------------- */

/* Which column a key names, or -1. */
static int key_column(const pi_out *o, const uint8_t *k, int64_t len) {
    for (int c = 0; c < o->ncols; c++)
        if (o->kinds[c] < KIND_ENTRIES && o->key_lens[c] == len && !memcmp(o->keys[c], k, (size_t)len)) return c;
    return -1;
}

/* A DECIMAL(38,3) value: an integer or a decimal of at most three digits after the point, no
   exponent, that fits in 64 bits once multiplied by 1000. */
static int decimal3(scan *s, int64_t *out) {
    const uint8_t *q = s->p, *end = s->end;
    int neg = 0;
    if (q < end && *q == '-') { neg = 1; q++; }
    const uint8_t *ip = q;
    uint64_t v = 0;
    while (q < end && *q >= '0' && *q <= '9') {
        if (v > (UINT64_MAX - 9) / 10) return PI_FALLBACK;
        v = v * 10 + (uint64_t)(*q - '0');
        q++;
    }
    if (q == ip || (q - ip > 1 && *ip == '0')) return PI_FALLBACK;
    int frac = 0;
    if (q < end && *q == '.') {
        q++;
        while (q < end && *q >= '0' && *q <= '9') {
            if (++frac > 3) return PI_FALLBACK;
            v = v * 10 + (uint64_t)(*q - '0');
            q++;
        }
        if (!frac) return PI_FALLBACK;
    }
    if (q < end && (*q == 'e' || *q == 'E')) return PI_FALLBACK;
    for (int i = frac; i < 3; i++) {
        if (v > UINT64_MAX / 10) return PI_FALLBACK;
        v *= 10;
    }
    if (v > (uint64_t)INT64_MAX) return PI_FALLBACK;
    *out = neg ? -(int64_t)v : (int64_t)v;
    s->p = q;
    return 0;
}

/* A value (not null) of text column c: a decoded string, a number as DuckDB writes it (see
   number), true / false.  Anything else: the fallback. */
static int text_value(scan *s, int c) {
    uint8_t b = *s->p;
    if (b == '"') return string(s, c, 1);
    if (b == '-' || (b >= '0' && b <= '9')) {
        const uint8_t *start = s->p, *canon;
        if (number(s, &canon) != NUM_KEEP) return PI_FALLBACK;
        return put(s, c, start, canon - start);
    }
    if (b == 't') return literal(s, "true", 4) || put(s, c, "true", 4);
    if (b == 'f') return literal(s, "false", 5) || put(s, c, "false", 5);
    return PI_FALLBACK;
}

/* The entries of the object at [a, b) -- already read as valid JSON -- appended to the
   KIND_ENTRIES column e (keys) and e + 1 (values).  0: read; 1: the object has what the MAP
   conversion would give otherwise (a nested value, a number it re-renders, a string it cannot
   hold, a key with an escape or written twice, more than MAX_ENTRIES): nothing is kept and the
   row's entries are NULL; PI_FALLBACK: out of memory. */
static int entries(scan *s, int e, const uint8_t *a, const uint8_t *b) {
    pi_out *o = s->o;
    scan t = *s;
    t.p = a;
    t.end = b;
    int64_t first = o->entries[e], key_bytes = o->bytes[e], value_bytes = o->bytes[e + 1];
    ws(&t);
    if (t.p >= t.end || *t.p != '{') goto other;
    t.p++;
    ws(&t);
    if (t.p < t.end && *t.p == '}') return 0; /* {}: no entries, not NULL */
    for (;;) {
        ws(&t);
        if (t.p >= t.end || *t.p != '"') goto other;
        const uint8_t *k = t.p + 1;
        if (string(&t, -1, 1)) goto other;
        int64_t klen = t.p - k - 1;
        if (memchr(k, '\\', (size_t)klen)) goto other;
        int64_t n = o->entries[e];
        if (n - first >= MAX_ENTRIES) goto other;
        for (int64_t i = first; i < n; i++)
            if (o->offsets[e][i + 1] - o->offsets[e][i] == klen && !memcmp(o->data[e] + o->offsets[e][i], k, (size_t)klen))
                goto other; /* a key twice: the conversion gives NULL */
        if (n == o->cap_entries[e] && grow_entries(&t, e)) goto other;
        if (put(&t, e, k, klen)) goto other;
        ws(&t);
        if (t.p >= t.end || *t.p != ':') goto other;
        t.p++;
        ws(&t);
        if (t.p >= t.end) goto other;
        uint8_t v = *t.p, valid = 1;
        if (v == 'n') {
            if (literal(&t, "null", 4)) goto other;
            valid = 0;
        } else if (v == '{' || v == '[') {
            goto other;
        } else if (text_value(&t, e + 1)) {
            goto other;
        }
        o->valid[e + 1][n] = valid;
        o->entries[e] = n + 1;
        o->offsets[e][n + 1] = o->bytes[e];
        o->offsets[e + 1][n + 1] = o->bytes[e + 1];
        ws(&t);
        if (t.p >= t.end) goto other;
        if (*t.p == ',') { t.p++; continue; }
        if (*t.p != '}') goto other;
        return 0;
    }
other:
    o->entries[e] = first;
    o->bytes[e] = key_bytes;
    o->bytes[e + 1] = value_bytes;
    if (t.no_memory) { s->no_memory = 1; return PI_FALLBACK; }
    return 1;
}

/* Whether row ``row`` of text column w holds exactly the len bytes of val (its offsets are set). */
static int says(const pi_out *o, int w, int64_t row, const char *val, int64_t len) {
    if (w < 0) return 1;
    if (!o->valid[w][row]) return 0;
    int64_t at = o->offsets[w][row];
    return o->offsets[w][row + 1] - at == len && !memcmp(o->data[w] + at, val, (size_t)len);
}

/* One event object at s->p. */
static int event(scan *s) {
    pi_out *o = s->o;
    if (o->rows == o->cap_rows && grow_rows(s)) return PI_FALLBACK;
    int64_t row = o->rows;
    uint32_t seen = 0;
    /* where the object of each KIND_ENTRIES column's key is, read after the event's last key */
    const uint8_t *span_a[MAX_COLS], *span_b[MAX_COLS];
    int any_entries = 0;
    for (int c = 0; c < o->ncols; c++) {
        if (o->kinds[c] == KIND_ENTRY_VALUES) continue; /* its validity is per entry */
        o->valid[c][row] = 0;
        if (o->kinds[c] == KIND_DECIMAL3) o->values[c][row] = 0;
        if (o->kinds[c] == KIND_ENTRIES) {
            any_entries = 1;
            span_a[c] = NULL;
        }
    }
    s->p++; /* '{' */
    ws(s);
    if (s->p < s->end && *s->p == '}') {
        s->p++;
    } else {
        for (;;) {
            ws(s);
            if (s->p >= s->end || *s->p != '"') return PI_FALLBACK;
            const uint8_t *k = s->p + 1;
            if (string(s, -1, 1)) return PI_FALLBACK;
            int64_t klen = s->p - k - 1;
            /* a key with an escape would be matched by its decoded form: left to DuckDB */
            if (memchr(k, '\\', (size_t)klen)) return PI_FALLBACK;
            int c = key_column(o, k, klen);
            ws(s);
            if (s->p >= s->end || *s->p != ':') return PI_FALLBACK;
            s->p++;
            ws(s);
            if (s->p >= s->end) return PI_FALLBACK;
            const uint8_t *at = s->p;
            if (c < 0) {
                if (value(s, -1, 1)) return PI_FALLBACK;
            } else {
                if (seen & (1u << c)) return PI_FALLBACK; /* a key twice */
                seen |= 1u << c;
                int kind = o->kinds[c];
                if (*s->p == 'n') {
                    if (literal(s, "null", 4)) return PI_FALLBACK;
                } else if (kind == KIND_DECIMAL3) {
                    if (decimal3(s, &o->values[c][row])) return PI_FALLBACK;
                    o->valid[c][row] = 1;
                } else if (kind == KIND_JSON) {
                    if (*s->p != '{' || value(s, c, 1)) return PI_FALLBACK;
                    o->valid[c][row] = 1;
                } else {
                    if (text_value(s, c)) return PI_FALLBACK;
                    o->valid[c][row] = 1;
                }
            }
            if (c >= 0 && s->entries_of[c] >= 0) {
                int e = s->entries_of[c];
                span_a[e] = at;
                span_b[e] = s->p;
            } else if (c < 0 && s->lone_entries) {
                for (int e = 0; e < o->ncols; e++)
                    if (o->kinds[e] == KIND_ENTRIES && o->key_lens[e] == klen && !memcmp(o->keys[e], k, (size_t)klen)) {
                        if (span_a[e]) return PI_FALLBACK; /* a key twice */
                        span_a[e] = at;
                        span_b[e] = s->p;
                    }
            }
            ws(s);
            if (s->p >= s->end) return PI_FALLBACK;
            if (*s->p == ',') { s->p++; continue; }
            if (*s->p != '}') return PI_FALLBACK;
            s->p++;
            break;
        }
    }
    for (int c = 0; c < o->ncols; c++)
        if (o->kinds[c] == KIND_TEXT || o->kinds[c] == KIND_JSON) o->offsets[c][row + 1] = o->bytes[c];
    if (any_entries)
        for (int e = 0; e < o->ncols; e++) {
            if (o->kinds[e] != KIND_ENTRIES) continue;
            if (span_a[e] && says(o, o->when_col[e], row, o->when_val[e], o->when_len[e])) {
                int r = entries(s, e, span_a[e], span_b[e]);
                if (r == PI_FALLBACK) return PI_FALLBACK;
                o->valid[e][row] = r == 0;
            }
            o->values[e][row + 1] = o->entries[e];
        }
    o->rows++;
    return 0;
}

/* Scan a part buf[0:len] of an event array for the columns o names.  first: the part starts at
   the array's ``[`` (whitespace before it allowed), else at an event's ``{``.  last: it ends with
   the array's ``]`` (whitespace after it allowed), else right after the comma (and whitespace)
   that follows its last event -- where the next part starts.  Returns the number of rows, or
   PI_FALLBACK (PI_NO_MEMORY when memory ran out); either way pi_free releases what was read. */
int64_t pi_scan(const uint8_t *buf, int64_t len, pi_out *o, int first, int last) {
    scan s = {buf, buf + len, o, 0, buf, {0}, 0};
    if (o->ncols < 0 || o->ncols > MAX_COLS) return PI_FALLBACK;
    for (int c = 0; c < o->ncols; c++) s.entries_of[c] = -1;
    for (int c = 0; c < o->ncols; c++) {
        if (o->kinds[c] != KIND_ENTRIES) continue;
        int shared = 0;
        for (int d = 0; d < o->ncols; d++)
            if (o->kinds[d] < KIND_ENTRIES && o->key_lens[d] == o->key_lens[c] &&
                !memcmp(o->keys[d], o->keys[c], (size_t)o->key_lens[c])) {
                if (s.entries_of[d] >= 0) return PI_FALLBACK; /* two entries columns of one key */
                s.entries_of[d] = (int8_t)c;
                shared = 1;
            }
        if (!shared) s.lone_entries = 1;
    }
    o->rows = 0;
    o->stopped_at = 0;
    if (grow_rows(&s)) return PI_NO_MEMORY;
    for (int c = 0; c < o->ncols; c++) {
        int kind = o->kinds[c];
        if (kind == KIND_ENTRIES && (c + 1 >= o->ncols || o->kinds[c + 1] != KIND_ENTRY_VALUES || o->when_col[c] >= o->ncols ||
                                     (o->when_col[c] >= 0 && o->kinds[o->when_col[c]] != KIND_TEXT)))
            return PI_FALLBACK; /* a layout the scan cannot fill */
        o->bytes[c] = 0;
        if (kind == KIND_TEXT || kind == KIND_JSON) o->offsets[c][0] = 0;
        if (kind == KIND_ENTRIES) {
            o->entries[c] = 0;
            if (!o->cap_entries[c] && grow_entries(&s, c)) return PI_NO_MEMORY;
            o->offsets[c][0] = o->offsets[c + 1][0] = 0;
            o->values[c][0] = 0;
        }
    }
    int64_t r = PI_FALLBACK;
    ws(&s);
    if (first) {
        if (s.p >= s.end || *s.p != '[') goto out;
        s.p++;
        ws(&s);
        if (s.p < s.end && *s.p == ']') {
            s.p++;
            ws(&s);
            if (s.p == s.end && last) r = 0;
            goto out;
        }
    }
    for (;;) {
        o->stopped_at = s.p - buf;
        if (s.p >= s.end || *s.p != '{' || event(&s)) goto out;
        ws(&s);
        if (s.p >= s.end) goto out;
        if (*s.p == ',') {
            s.p++;
            ws(&s);
            if (s.p == s.end && !last) { r = o->rows; goto out; }
            continue;
        }
        if (*s.p != ']' || !last) goto out;
        s.p++;
        ws(&s);
        if (s.p == s.end) r = o->rows;
        goto out;
    }
out:
    if (r >= 0) o->stopped_at = -1;
    return s.no_memory ? PI_NO_MEMORY : r;
}

/* Release what a scan read into o. */
void pi_free(pi_out *o) {
    for (int c = 0; c < MAX_COLS; c++) {
        free(o->offsets[c]);
        free(o->data[c]);
        free(o->values[c]);
        free(o->valid[c]);
        o->offsets[c] = NULL;
        o->data[c] = NULL;
        o->values[c] = NULL;
        o->valid[c] = NULL;
        o->cap_bytes[c] = 0;
        o->entries[c] = 0;
        o->cap_entries[c] = 0;
    }
    o->cap_rows = 0;
}

/* Where the event after position ``from`` starts: the ``{`` of the first ``}`` ``,`` ``{``
   (whitespace allowed between) at or after ``from``; -1 if none.  Outside a string this is a
   boundary between two events of the array (nested objects end in ``}`` too, but a part that
   does not start at an event fails its scan, and so does the part before it: a part is kept
   only if the part before it ended exactly where it starts). */
int64_t pi_next_event(const uint8_t *buf, int64_t len, int64_t from) {
    const uint8_t *p = buf + (from < 0 ? 0 : from), *end = buf + len;
    while (p < end) {
        const uint8_t *q = memchr(p, '}', (size_t)(end - p));
        if (!q) return -1;
        const uint8_t *r = q + 1;
        while (r < end && (*r == ' ' || *r == '\n' || *r == '\r' || *r == '\t')) r++;
        if (r < end && *r == ',') {
            r++;
            while (r < end && (*r == ' ' || *r == '\n' || *r == '\r' || *r == '\t')) r++;
            if (r < end && *r == '{') return r - buf;
        }
        p = q + 1;
    }
    return -1;
}

/* The size of pi_out, so that the caller can check its own layout of it. */
int64_t pi_out_size(void) { return (int64_t)sizeof(pi_out); }

#ifndef PI_SOURCE_HASH
#define PI_SOURCE_HASH ""
#endif

/* What this library was built from (_native_build.source_hash), so that a library built from
   another version of this file is never used. */
const char *pi_source_hash(void) { return PI_SOURCE_HASH; }
