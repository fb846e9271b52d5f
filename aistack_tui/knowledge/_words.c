/* identifier_words in C: the sub-words of every camelCase identifier in a text.
 *
 * The same function as `chunks.identifier_words_py` (which documents the rules and is
 * what runs where this module could not be compiled): on a first index of a large tree
 * the regular expressions and the Python loop around them were about a fifth of the
 * whole build's CPU time, the largest single cost after tree-sitter's own parse.
 * tests/knowledge/test_identifier_words.py checks that both give the same answer.
 *
 * No Python object is made per identifier or per word: identifiers and words are
 * de-duplicated as spans of two byte buffers (identifiers are ASCII, as `\w` is here, so
 * a name is the same bytes in any text, whatever its kind). The chunker (_chunks.c) runs
 * one scan over a chunk's symbol and then its text, reusing the buffers chunk after chunk.
 */
#include "_words.h"
#include <stdint.h>
#include <string.h>

enum { UPPER = 1, LOWER = 2, DIGIT = 4, UNDERSCORE = 8 };
/* ASCII only: `\w` is ASCII here, as in the regexes; 256 entries so a one-byte text's
 * characters are looked up with no range check. */
static unsigned char classes[256];

static inline int class_of(Py_UCS4 c) { return c < 256 ? classes[c] : 0; }
static inline int is_upper(Py_UCS4 c) { return class_of(c) & UPPER; }
static inline int is_lower(Py_UCS4 c) { return class_of(c) & LOWER; }
static inline int is_digit(Py_UCS4 c) { return class_of(c) & DIGIT; }
static inline int is_lower_or_digit(Py_UCS4 c) { return class_of(c) & (LOWER | DIGIT); }
static inline int is_word(Py_UCS4 c) { return class_of(c) != 0; }

static int spans_init(Spans *set, size_t capacity) {
    set->slots = PyMem_Malloc(capacity * sizeof(Span));
    set->mask = capacity - 1;
    set->used = 0;
    if (set->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < capacity; i++) set->slots[i].start = -1;
    return 0;
}

static void spans_free(Spans *set) {
    PyMem_Free(set->slots);
    set->slots = NULL;
}

/* A string's hash is Bernstein's, h * 33 ^ byte (a shift, an add and a xor per byte: FNV's
 * multiply made the chunker ~4% slower), mixed by one multiply for its slot, as its low
 * bits depend on the bytes' low bits only. */
static const size_t HASH_SEED = 5381;

static inline size_t slot_of(const Spans *set, size_t hash) {
    uint64_t mixed = (uint64_t)hash * 0x9E3779B97F4A7C15u;
    return (size_t)(mixed >> 32) & set->mask;
}

/* 1 if bytes[start:start+length] (whose hash is `hash`) is in the set, else 0 after
 * adding it; -1: no memory. */
static int spans_add(Spans *set, const char *bytes, Py_ssize_t start, Py_ssize_t length,
                     size_t hash) {
    size_t at = slot_of(set, hash);
    for (; set->slots[at].start >= 0; at = (at + 1) & set->mask) {
        const Span *slot = &set->slots[at];
        if (slot->hash == hash && slot->length == length &&
            memcmp(bytes + slot->start, bytes + start, (size_t)length) == 0)
            return 1;
    }
    set->slots[at] = (Span){start, length, hash};
    if (++set->used * 2 <= set->mask) return 0;
    Spans bigger;
    if (spans_init(&bigger, (set->mask + 1) * 2) < 0) return -1;
    for (size_t i = 0; i <= set->mask; i++) {
        if (set->slots[i].start < 0) continue;
        size_t to = slot_of(&bigger, set->slots[i].hash);
        while (bigger.slots[to].start >= 0) to = (to + 1) & bigger.mask;
        bigger.slots[to] = set->slots[i];
    }
    bigger.used = set->used;
    spans_free(set);
    *set = bigger;
    return 0;
}

/* Room for `extra` more bytes: 0, or -1 with MemoryError set. */
static int strings_reserve(Strings *set, Py_ssize_t extra) {
    Py_ssize_t needed = set->length + extra;
    if (needed <= set->capacity) return 0;
    Py_ssize_t capacity = set->capacity * 2 > needed ? set->capacity * 2 : needed;
    char *grown = PyMem_Realloc(set->bytes, (size_t)capacity);
    if (grown == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    set->bytes = grown;
    set->capacity = capacity;
    return 0;
}

/* Make the `length` bytes written just past the set's strings (room reserved, `hash`
 * their hash) one of them, followed by `separator` if not 0, unless already present: 1
 * if it was, 0 if added, -1 with MemoryError set. */
static inline int strings_keep(Strings *set, Py_ssize_t length, size_t hash, char separator) {
    int known = spans_add(&set->seen, set->bytes, set->length, length, hash);
    if (known == 0) {
        set->length += length;
        if (separator) set->bytes[set->length++] = separator;
    }
    return known;
}

/* Append text[start:end] (an identifier: ASCII letters, digits and `_`) unless present:
 * 1 if it was, 0 if added, -1 with MemoryError set. Inlined for each kind of text, as
 * the callers below. */
static Py_ALWAYS_INLINE inline int strings_add(Strings *set, int kind, const void *data,
                                               Py_ssize_t start, Py_ssize_t end) {
    if (strings_reserve(set, end - start) < 0) return -1;
    char *out = set->bytes + set->length;
    size_t hash = HASH_SEED;
    for (Py_ssize_t i = start; i < end; i++) {
        unsigned char byte = (unsigned char)PyUnicode_READ(kind, data, i);
        out[i - start] = (char)byte;
        hash = hash * 33 ^ byte;
    }
    return strings_keep(set, end - start, hash, 0);
}

static void strings_clear(Strings *set) {
    set->length = 0;
    set->seen.used = 0;
    for (size_t i = 0; i <= set->seen.mask; i++) set->seen.slots[i].start = -1;
}

static void strings_free(Strings *set) {
    spans_free(&set->seen);
    PyMem_Free(set->bytes);
    set->bytes = NULL;
    set->length = set->capacity = 0;
}

/* The words of a piece between underscores, cut as
 * `[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+`: a word ends before a capital that
 * follows a lower-case letter or digit, and before the last capital of a run followed by
 * a lower-case letter or digit (HTTPServer -> HTTP, Server). One pass: each word is
 * lower-cased and hashed as it is found. */
static Py_ALWAYS_INLINE inline int split_piece(Strings *words, int kind, const void *data,
                                               Py_ssize_t p, Py_ssize_t end) {
    if (p == end) return 0; /* before a leading underscore, or between two */
    /* Room for every word of the piece and a space after each. */
    if (strings_reserve(words, 2 * (end - p)) < 0) return -1;
    Py_ssize_t word = p;
    size_t hash = HASH_SEED;
    int before = 0; /* the class of the character before, in this piece */
    for (Py_ssize_t i = p; i < end; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int now = class_of(c);
        if ((now & UPPER) &&
            ((before & (LOWER | DIGIT)) ||
             ((before & UPPER) && i + 1 < end &&
              is_lower_or_digit(PyUnicode_READ(kind, data, i + 1))))) {
            if (strings_keep(words, i - word, hash, ' ') < 0) return -1;
            word = i;
            hash = HASH_SEED;
        }
        unsigned char byte = (unsigned char)(now & UPPER ? c + ('a' - 'A') : c);
        words->bytes[words->length + (i - word)] = (char)byte;
        hash = hash * 33 ^ byte;
        before = now;
    }
    return strings_keep(words, end - word, hash, ' ') < 0 ? -1 : 0;
}

/* Whether text[start:end] has a lower-case letter and an inner capital
 * (`[a-z0-9][A-Z]|[A-Z][A-Z][a-z]`): the identifiers worth splitting. */
static Py_ALWAYS_INLINE inline int worth_splitting(int kind, const void *data,
                                                   Py_ssize_t start, Py_ssize_t end) {
    int has_lower = 0, inner = 0;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        has_lower |= is_lower(c);
        if (i + 1 < end) {
            Py_UCS4 next = PyUnicode_READ(kind, data, i + 1);
            if (is_lower_or_digit(c) && is_upper(next)) inner = 1;
            if (i + 2 < end && is_upper(c) && is_upper(next) &&
                is_lower(PyUnicode_READ(kind, data, i + 2)))
                inner = 1;
        }
    }
    return has_lower && inner;
}

/* Split the identifier text[start:end] (an ASCII word with a capital after its first
 * character) if it is worth it and was not split already. */
static Py_ALWAYS_INLINE inline int identifier(WordScan *scan, int kind, const void *data,
                                              Py_ssize_t start, Py_ssize_t end) {
    int known = strings_add(&scan->identifiers, kind, data, start, end);
    if (known != 0 || !worth_splitting(kind, data, start, end)) return known < 0 ? -1 : 0;
    Py_ssize_t piece = start;
    for (Py_ssize_t j = start; j <= end; j++) {
        if (j == end || PyUnicode_READ(kind, data, j) == '_') {
            if (split_piece(&scan->words, kind, data, piece, j) < 0) return -1;
            piece = j + 1;
        }
    }
    return 0;
}

/* Split every identifier of `text` worth it, once per distinct identifier. Inlined with
 * `kind` a constant (find_words below), so reading a character is a plain load. */
static Py_ALWAYS_INLINE inline int find_words_of_kind(WordScan *scan, int kind,
                                                      const void *data, Py_ssize_t length) {
    Py_ssize_t i = 0;
    while (i < length) {
        if (!is_word(PyUnicode_READ(kind, data, i))) {
            i++;
            continue;
        }
        /* An ASCII word: `\b[A-Za-z_]...` with a capital after its first character. */
        Py_ssize_t start = i, end = i + 1;
        int capital_inside = 0;
        while (end < length && is_word(PyUnicode_READ(kind, data, end))) {
            capital_inside |= is_upper(PyUnicode_READ(kind, data, end));
            end++;
        }
        i = end;
        if (capital_inside && !is_digit(PyUnicode_READ(kind, data, start)) &&
            identifier(scan, kind, data, start, end) < 0)
            return -1;
    }
    return 0;
}

/* The first capital of data[i:length], or length: eight bytes at a time, each byte
 * tested for 'A'..'Z' with no branch (bytes of 128 and up are not ASCII, so not one). */
static inline Py_ssize_t next_capital(const Py_UCS1 *data, Py_ssize_t i, Py_ssize_t length) {
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    for (; i + 8 <= length; i += 8) {
        uint64_t x;
        memcpy(&x, data + i, 8);
        uint64_t low = x & ~high; /* each byte below 128: adding below cannot carry over */
        uint64_t at_least_a = low + ones * (0x80 - 'A'), above_z = low + ones * (0x80 - 'Z' - 1);
        if (at_least_a & ~above_z & ~x & high) break; /* found in these eight */
    }
    for (; i < length; i++)
        if (is_upper(data[i])) return i;
    return length;
}

/* find_words_of_kind for one-byte texts (nearly all source code), which goes from
 * capital to capital rather than word to word: most words have none, and the branch at
 * the end of each word, which no predictor gets right, was most of the scan's time. */
static int find_words_one_byte(WordScan *scan, const Py_UCS1 *data, Py_ssize_t length) {
    Py_ssize_t i = 0; /* 0, or just after a word: data[i] is not a word character */
    for (;;) {
        Py_ssize_t capital = next_capital(data, i, length);
        if (capital == length) return 0;
        Py_ssize_t start = capital, end = capital + 1;
        while (start > i && is_word(data[start - 1])) start--;
        int capital_inside = capital > start;
        while (end < length && is_word(data[end])) {
            capital_inside |= is_upper(data[end]);
            end++;
        }
        i = end;
        if (capital_inside && !is_digit(data[start]) &&
            identifier(scan, PyUnicode_1BYTE_KIND, data, start, end) < 0)
            return -1;
    }
}

static int find_words(WordScan *scan, int kind, const void *data, Py_ssize_t length) {
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        return find_words_one_byte(scan, data, length);
    case PyUnicode_2BYTE_KIND:
        return find_words_of_kind(scan, PyUnicode_2BYTE_KIND, data, length);
    default:
        return find_words_of_kind(scan, PyUnicode_4BYTE_KIND, data, length);
    }
}

int word_scan_init(WordScan *scan) {
    return spans_init(&scan->words.seen, 64) < 0 || spans_init(&scan->identifiers.seen, 64) < 0
               ? -1
               : 0;
}

void word_scan_clear(WordScan *scan) {
    strings_clear(&scan->words);
    strings_clear(&scan->identifiers);
}

int word_scan_text(WordScan *scan, PyObject *text) {
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "identifier_words() takes a str");
        return -1;
    }
    return find_words(scan, PyUnicode_KIND(text), PyUnicode_DATA(text),
                      PyUnicode_GET_LENGTH(text));
}

PyObject *word_scan_result(const WordScan *scan) {
    /* Every word is followed by a space: the last one is not kept. */
    Py_ssize_t length = scan->words.length ? scan->words.length - 1 : 0;
    PyObject *result = PyUnicode_New(length, 127);
    if (result != NULL) memcpy(PyUnicode_DATA(result), scan->words.bytes, (size_t)length);
    return result;
}

void word_scan_free(WordScan *scan) {
    strings_free(&scan->words);
    strings_free(&scan->identifiers);
}

static PyObject *identifier_words(PyObject *module, PyObject *text) {
    (void)module;
    WordScan scan = {0};
    PyObject *result = NULL;
    if (word_scan_init(&scan) == 0 && word_scan_text(&scan, text) == 0)
        result = word_scan_result(&scan);
    word_scan_free(&scan);
    return result;
}

static PyMethodDef methods[] = {
    {"identifier_words", identifier_words, METH_O,
     "The sub-words of every camelCase identifier in a text, space-separated."},
    {"configure", (PyCFunction)(void (*)(void))chunks_configure, METH_FASTCALL,
     "configure(chunk_type, max_chunk_lines, window_lines, max_chunk_chars): chunks.py's "
     "Chunk and limits, given once at import."},
    {"build_chunks", (PyCFunction)(void (*)(void))chunks_build, METH_FASTCALL,
     "build_chunks(lines, definitions, language): chunks.build_chunks_py in C."},
    {"window_chunks", chunks_window, METH_O, "window_chunks(lines): chunks.window_chunks_py in C."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_words", "identifier_words and the chunker in C (see chunks.py).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__words(void) {
    for (int c = 0; c < 128; c++) { /* 128..255 stay 0 */
        classes[c] = (unsigned char)((c >= 'A' && c <= 'Z') * UPPER + (c >= 'a' && c <= 'z') * LOWER +
                                     (c >= '0' && c <= '9') * DIGIT + (c == '_') * UNDERSCORE);
    }
    return PyModule_Create(&module);
}
