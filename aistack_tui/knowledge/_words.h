/* What _chunks.c uses of _words.c: one extension module (`_words`) built from both files,
 * so the chunker calls the identifier-word scan directly, with no Python call and no
 * concatenated "symbol\ntext" string per chunk. */
#ifndef AISTACK_WORDS_H
#define AISTACK_WORDS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

/* A set of byte spans of one buffer (open addressing): (offset, length) pairs compared
 * by content. Offsets, not pointers, so the buffer may grow meanwhile. */
typedef struct {
    Py_ssize_t start; /* -1: an empty slot */
    Py_ssize_t length;
    size_t hash;
} Span;

typedef struct {
    Span *slots;
    size_t mask, used;
} Spans;

/* Distinct ASCII strings stored one after another in one buffer, each followed by a
 * separator when there is one (the words, space-separated, are the result as it is). */
typedef struct {
    char *bytes;
    Py_ssize_t length, capacity;
    Spans seen;
} Strings;

/* The state of one `identifier_words`: the words found so far, and the identifiers
 * already split (the same name comes back line after line). */
typedef struct {
    Strings words, identifiers;
} WordScan;

/* 0, or -1 with MemoryError set. A WordScan is zeroed before (`= {0}`) and freed after,
 * whatever these return. */
int word_scan_init(WordScan *scan);
/* Forget the words and identifiers, keep the memory: the next text starts afresh. */
void word_scan_clear(WordScan *scan);
/* Add the words of one more text, as if it came after a "\n" (which no identifier
 * crosses): scanning a then b gives the words of f"{a}\n{b}". 0, or -1 with an error. */
int word_scan_text(WordScan *scan, PyObject *text);
/* The words so far, space-separated, as a new str; NULL with an error set. */
PyObject *word_scan_result(const WordScan *scan);
void word_scan_free(WordScan *scan);

/* _chunks.c's functions, in the module's method table (_words.c). */
PyObject *chunks_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
PyObject *chunks_build(PyObject *module, PyObject *const *args, Py_ssize_t nargs);
PyObject *chunks_window(PyObject *module, PyObject *lines);

#endif
