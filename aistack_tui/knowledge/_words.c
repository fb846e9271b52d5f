/* identifier_words in C: the sub-words of every camelCase identifier in a text.
 *
 * The same function as `chunks.identifier_words_py` (which documents the rules and is
 * what runs where this module could not be compiled): on a first index of a large tree
 * the regular expressions and the Python loop around them were about a fifth of the
 * whole build's CPU time, the largest single cost after tree-sitter's own parse.
 * tests/knowledge/test_identifier_words.py checks that both give the same answer.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

enum { UPPER = 1, LOWER = 2, DIGIT = 4, UNDERSCORE = 8 };
static unsigned char classes[128];  /* ASCII only: `\w` is ASCII here, as in the regexes */

static inline int class_of(Py_UCS4 c) { return c < 128 ? classes[c] : 0; }
static inline int is_upper(Py_UCS4 c) { return class_of(c) & UPPER; }
static inline int is_lower(Py_UCS4 c) { return class_of(c) & LOWER; }
static inline int is_digit(Py_UCS4 c) { return class_of(c) & DIGIT; }
static inline int is_lower_or_digit(Py_UCS4 c) { return class_of(c) & (LOWER | DIGIT); }
static inline int is_word(Py_UCS4 c) { return class_of(c) != 0; }

/* Add the lower-cased text[start:end] (ASCII) to `words`, an insertion-ordered dict. */
static int add_part(PyObject *words, int kind, const void *data, Py_ssize_t start,
                    Py_ssize_t end) {
    PyObject *part = PyUnicode_New(end - start, 127);
    if (part == NULL) return -1;
    Py_UCS1 *out = PyUnicode_1BYTE_DATA(part);
    for (Py_ssize_t i = start; i < end; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        out[i - start] = (Py_UCS1)(is_upper(c) ? c + ('a' - 'A') : c);
    }
    int failed = PyDict_SetDefault(words, part, Py_None) == NULL;
    Py_DECREF(part);
    return failed ? -1 : 0;
}

/* A piece between underscores, cut as `[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z0-9]+|[A-Z]+`. */
static int split_piece(PyObject *words, int kind, const void *data, Py_ssize_t p,
                       Py_ssize_t end) {
    while (p < end) {
        Py_ssize_t q = p;
        if (is_upper(PyUnicode_READ(kind, data, p))) {
            while (q < end && is_upper(PyUnicode_READ(kind, data, q))) q++;
            Py_ssize_t run = q - p;
            int lower_after = q < end && is_lower_or_digit(PyUnicode_READ(kind, data, q));
            if (run >= 2 && lower_after) {
                q--;  /* an acronym before a word: HTTPServer -> HTTP, Server */
            } else if (run == 1 && lower_after) {
                while (q < end && is_lower_or_digit(PyUnicode_READ(kind, data, q))) q++;
            }
        } else {
            while (q < end && is_lower_or_digit(PyUnicode_READ(kind, data, q))) q++;
        }
        if (add_part(words, kind, data, p, q) < 0) return -1;
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

/* The identifiers already split in this text, as (start, length) spans of it: an open
 * addressing set, so a name repeated through a chunk is looked at once, with no string
 * object made for it. */
typedef struct {
    Py_ssize_t *starts; /* -1: empty slot */
    Py_ssize_t *lengths;
    size_t mask, used;
} Spans;

static int spans_init(Spans *set, size_t capacity) {
    set->starts = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    set->lengths = PyMem_Malloc(capacity * sizeof(Py_ssize_t));
    if (set->starts == NULL || set->lengths == NULL) return -1;
    for (size_t i = 0; i < capacity; i++) set->starts[i] = -1;
    set->mask = capacity - 1;
    set->used = 0;
    return 0;
}

static void spans_free(Spans *set) {
    PyMem_Free(set->starts);
    PyMem_Free(set->lengths);
}

static size_t span_hash(int kind, const char *bytes, Py_ssize_t start, Py_ssize_t length) {
    size_t h = 1469598103934665603u; /* FNV-1a over the span's bytes */
    for (Py_ssize_t i = start * kind; i < (start + length) * kind; i++)
        h = (h ^ (unsigned char)bytes[i]) * 1099511628211u;
    return h;
}

static int spans_grow(Spans *set, int kind, const char *bytes);

/* 1 if text[start:start+length] was seen, else 0 (and it is now); -1 on no memory. */
static int spans_add(Spans *set, int kind, const char *bytes, Py_ssize_t start,
                     Py_ssize_t length) {
    size_t slot = span_hash(kind, bytes, start, length) & set->mask;
    while (set->starts[slot] >= 0) {
        if (set->lengths[slot] == length &&
            memcmp(bytes + set->starts[slot] * kind, bytes + start * kind, length * kind) == 0)
            return 1;
        slot = (slot + 1) & set->mask;
    }
    set->starts[slot] = start;
    set->lengths[slot] = length;
    if (++set->used * 2 > set->mask) return spans_grow(set, kind, bytes);
    return 0;
}

static int spans_grow(Spans *set, int kind, const char *bytes) {
    Spans bigger;
    if (spans_init(&bigger, (set->mask + 1) * 2) < 0) {
        spans_free(&bigger);
        return -1;
    }
    for (size_t i = 0; i <= set->mask; i++)
        if (set->starts[i] >= 0) spans_add(&bigger, kind, bytes, set->starts[i], set->lengths[i]);
    spans_free(set);
    *set = bigger;
    return 0;
}

static PyObject *identifier_words(PyObject *module, PyObject *text) {
    (void)module;
    if (!PyUnicode_Check(text)) {
        PyErr_SetString(PyExc_TypeError, "identifier_words() takes a str");
        return NULL;
    }
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    PyObject *words = PyDict_New();
    PyObject *result = NULL;
    Spans seen = {NULL, NULL, 0, 0};
    if (words == NULL) return NULL;
    if (spans_init(&seen, 64) < 0) {
        PyErr_NoMemory();
        goto done;
    }
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
        int known = spans_add(&seen, kind, data, start, end - start);
        if (known < 0) {
            PyErr_NoMemory();
            goto done;
        }
        if (known == 1 || !worth_splitting(kind, data, start, end)) continue;
        Py_ssize_t piece = start;
        for (Py_ssize_t j = start; j <= end; j++) {
            if (j == end || PyUnicode_READ(kind, data, j) == '_') {
                if (split_piece(words, kind, data, piece, j) < 0) goto done;
                piece = j + 1;
            }
        }
    }
    PyObject *separator = PyUnicode_FromString(" ");
    if (separator != NULL) {
        result = PyUnicode_Join(separator, words);
        Py_DECREF(separator);
    }
done:
    spans_free(&seen);
    Py_XDECREF(words);
    return result;
}

static PyMethodDef methods[] = {
    {"identifier_words", identifier_words, METH_O,
     "The sub-words of every camelCase identifier in a text, space-separated."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_words", "identifier_words in C (see chunks.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__words(void) {
    for (int c = 0; c < 128; c++) {
        classes[c] = (unsigned char)((c >= 'A' && c <= 'Z') * UPPER + (c >= 'a' && c <= 'z') * LOWER +
                                     (c >= '0' && c <= '9') * DIGIT + (c == '_') * UNDERSCORE);
    }
    return PyModule_Create(&module);
}
