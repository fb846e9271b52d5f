/* identifier_words in C: the sub-words of every camelCase identifier in a text.
 *
 * The same function as `chunks.identifier_words_py` (which documents the rules and is
 * what runs where this module could not be compiled): on a first index of a large tree
 * the regular expressions and the Python loop around them were about a fifth of the
 * whole build's CPU time, the largest single cost after tree-sitter's own parse.
 * tests/knowledge/test_identifier_words.py checks that both give the same answer.
 *
 * No Python object is made per identifier or per word: identifiers and words are
 * de-duplicated as spans of the text and of the output buffer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

enum { UPPER = 1, LOWER = 2, DIGIT = 4, UNDERSCORE = 8 };
static unsigned char classes[128]; /* ASCII only: `\w` is ASCII here, as in the regexes */

static inline int class_of(Py_UCS4 c) { return c < 128 ? classes[c] : 0; }
static inline int is_upper(Py_UCS4 c) { return class_of(c) & UPPER; }
static inline int is_lower(Py_UCS4 c) { return class_of(c) & LOWER; }
static inline int is_digit(Py_UCS4 c) { return class_of(c) & DIGIT; }
static inline int is_lower_or_digit(Py_UCS4 c) { return class_of(c) & (LOWER | DIGIT); }
static inline int is_word(Py_UCS4 c) { return class_of(c) != 0; }

/* A set of byte spans of one buffer (open addressing): (offset, length) pairs compared
 * by content. Offsets, not pointers, so the buffer may grow meanwhile. */
typedef struct {
    Py_ssize_t *starts; /* -1: an empty slot */
    Py_ssize_t *lengths;
    size_t mask, used;
} Spans;

static int spans_init(Spans *set, size_t capacity) {
    set->starts = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    set->lengths = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    set->mask = capacity - 1;
    set->used = 0;
    if (set->starts == NULL || set->lengths == NULL) return -1;
    for (size_t i = 0; i < capacity; i++) set->starts[i] = -1;
    return 0;
}

static void spans_free(Spans *set) {
    PyMem_Free(set->starts);
    PyMem_Free(set->lengths);
    set->starts = set->lengths = NULL;
}

static size_t span_hash(const char *bytes, Py_ssize_t start, Py_ssize_t length) {
    size_t h = 1469598103934665603u; /* FNV-1a */
    for (Py_ssize_t i = start; i < start + length; i++)
        h = (h ^ (unsigned char)bytes[i]) * 1099511628211u;
    return h;
}

static void spans_put(Spans *set, size_t slot, Py_ssize_t start, Py_ssize_t length) {
    set->starts[slot] = start;
    set->lengths[slot] = length;
    set->used++;
}

/* 1 if bytes[start:start+length] is in the set, else 0 after adding it; -1: no memory. */
static int spans_add(Spans *set, const char *bytes, Py_ssize_t start, Py_ssize_t length) {
    size_t slot = span_hash(bytes, start, length) & set->mask;
    while (set->starts[slot] >= 0) {
        if (set->lengths[slot] == length &&
            memcmp(bytes + set->starts[slot], bytes + start, (size_t)length) == 0)
            return 1;
        slot = (slot + 1) & set->mask;
    }
    spans_put(set, slot, start, length);
    if (set->used * 2 <= set->mask) return 0;
    Spans bigger;
    if (spans_init(&bigger, (set->mask + 1) * 2) < 0) {
        spans_free(&bigger);
        return -1;
    }
    for (size_t i = 0; i <= set->mask; i++) {
        if (set->starts[i] < 0) continue;
        size_t at = span_hash(bytes, set->starts[i], set->lengths[i]) & bigger.mask;
        while (bigger.starts[at] >= 0) at = (at + 1) & bigger.mask;
        spans_put(&bigger, at, set->starts[i], set->lengths[i]);
    }
    spans_free(set);
    *set = bigger;
    return 0;
}

/* The words found so far, space-separated, each once. */
typedef struct {
    char *bytes;
    Py_ssize_t length, capacity;
    Spans seen;
} Words;

/* Append the lower-cased text[start:end] (ASCII letters and digits) unless present. */
static int add_word(Words *words, int kind, const void *data, Py_ssize_t start,
                    Py_ssize_t end) {
    Py_ssize_t needed = words->length + (end - start) + 1;
    if (needed > words->capacity) {
        Py_ssize_t capacity = words->capacity * 2 > needed ? words->capacity * 2 : needed;
        char *grown = PyMem_Realloc(words->bytes, (size_t)capacity);
        if (grown == NULL) return -1;
        words->bytes = grown;
        words->capacity = capacity;
    }
    char *out = words->bytes + words->length;
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        out[i - start] = (char)(is_upper(c) ? c + ('a' - 'A') : c);
    }
    int known = spans_add(&words->seen, words->bytes, words->length, end - start);
    if (known == 0) {
        words->length += end - start;
        words->bytes[words->length++] = ' ';
    }
    return known < 0 ? -1 : 0;
}

/* A piece between underscores, cut as `[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+`. */
static int split_piece(Words *words, int kind, const void *data, Py_ssize_t p,
                       Py_ssize_t end) {
    while (p < end) {
        Py_ssize_t q = p;
        if (is_upper(PyUnicode_READ(kind, data, p))) {
            while (q < end && is_upper(PyUnicode_READ(kind, data, q))) q++;
            Py_ssize_t run = q - p;
            int lower_after = q < end && is_lower_or_digit(PyUnicode_READ(kind, data, q));
            if (run >= 2 && lower_after) {
                q--; /* an acronym before a word: HTTPServer -> HTTP, Server */
            } else if (run == 1 && lower_after) {
                while (q < end && is_lower_or_digit(PyUnicode_READ(kind, data, q))) q++;
            }
        } else {
            while (q < end && is_lower_or_digit(PyUnicode_READ(kind, data, q))) q++;
        }
        if (add_word(words, kind, data, p, q) < 0) return -1;
        p = q;
    }
    return 0;
}

/* Whether text[start:end] has a lower-case letter and an inner capital
 * (`[a-z0-9][A-Z]|[A-Z][A-Z][a-z]`): the identifiers worth splitting. */
static int worth_splitting(int kind, const void *data, Py_ssize_t start, Py_ssize_t end) {
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

/* Split every identifier of `text` worth it, once per distinct identifier. */
static int find_words(Words *words, Spans *identifiers, int kind, const void *data,
                      Py_ssize_t length) {
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
        if (!capital_inside || is_digit(PyUnicode_READ(kind, data, start))) continue;
        int known = spans_add(identifiers, (const char *)data, start * kind, (end - start) * kind);
        if (known < 0) return -1;
        if (known == 1 || !worth_splitting(kind, data, start, end)) continue;
        Py_ssize_t piece = start;
        for (Py_ssize_t j = start; j <= end; j++) {
            if (j == end || PyUnicode_READ(kind, data, j) == '_') {
                if (split_piece(words, kind, data, piece, j) < 0) return -1;
                piece = j + 1;
            }
        }
    }
    return 0;
}

static PyObject *identifier_words(PyObject *module, PyObject *text) {
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "identifier_words() takes a str");
        return NULL;
    }
    Words words = {NULL, 0, 0, {NULL, NULL, 0, 0}};
    Spans identifiers = {NULL, NULL, 0, 0};
    PyObject *result = NULL;
    if (spans_init(&words.seen, 64) == 0 && spans_init(&identifiers, 64) == 0 &&
        find_words(&words, &identifiers, PyUnicode_KIND(text), PyUnicode_DATA(text),
                   PyUnicode_GET_LENGTH(text)) == 0) {
        /* Every word is followed by a space: the last one is not kept. */
        result = PyUnicode_DecodeASCII(words.bytes, words.length ? words.length - 1 : 0, NULL);
    } else {
        PyErr_NoMemory();
    }
    spans_free(&identifiers);
    spans_free(&words.seen);
    PyMem_Free(words.bytes);
    return result;
}

static PyMethodDef methods[] = {
    {"identifier_words", identifier_words, METH_O,
     "The sub-words of every camelCase identifier in a text, space-separated."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_words", "identifier_words in C (see chunks.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__words(void) {
    for (int c = 0; c < 128; c++) {
        classes[c] = (unsigned char)((c >= 'A' && c <= 'Z') * UPPER + (c >= 'a' && c <= 'z') * LOWER +
                                     (c >= '0' && c <= '9') * DIGIT + (c == '_') * UNDERSCORE);
    }
    return PyModule_Create(&module);
}
