/* The chunker in C: `chunks.build_chunks_py` and `chunks.window_chunks_py` compiled.
 *
 * Those functions are the reference (and what runs where this module could not be
 * built); this file computes the same chunks in the same order, and
 * tests/knowledge/test_chunks_compiled.py holds it to that. On a first index of a
 * generated 10k-file tree the Python chunker cost 0.7 of the 8.5 CPU-s of extracting the
 * files: a few Python calls, a slice, a join and a `Chunk` per chunk, and a `strip()` per
 * line looked at.
 *
 * Here a chunk's text is made once at its final length, its identifier words are
 * scanned straight from its symbol and text (no "symbol\ntext" string), and a `Chunk` is
 * made without running its dataclass `__init__` (which sets each field through
 * `object.__setattr__`, a third of the Python chunker's time): its six slots are set
 * through their own descriptors, as `__init__` does.
 */
#include "_words.h"

static PyObject *chunk_type;      /* chunks.py's Chunk, given by configure() */
static PyObject *chunk_slots[6];  /* its slots' descriptors, in field order */
static Py_ssize_t max_chunk_lines, window_lines, max_chunk_chars;
static PyObject *empty_tuple, *empty_str, *kind_module, *kind_section, *kind_text;
static PyObject *name_chunk_start, *name_start_line, *name_end_line, *name_qualname, *name_kind;

static const char *const slot_names[6] = {"start_line", "end_line", "symbol",
                                          "kind",       "text",     "idents"};

/* The state of one call: the file's lines and the chunks made so far. */
typedef struct {
    PyObject *lines;        /* a copy of the list of lines, all str: no one else can change it */
    Py_ssize_t line_count;
    PyObject *chunks;       /* the result: a list of Chunk */
    WordScan words;         /* reused chunk after chunk */
} Builder;

/* A definition as the chunker sees it (chunks.py's `_Node`), or the whole file. */
typedef struct {
    Py_ssize_t start, end;
    PyObject *symbol, *kind; /* owned */
    int heading;
    Py_ssize_t first_child, last_child, next_sibling; /* indexes; -1: none */
} Node;

/* Line `number` (1-based), borrowed. */
static inline PyObject *line_at(const Builder *b, Py_ssize_t number) {
    if (number < 1 || number > b->line_count) { /* never: the tests hold the C to that */
        PyErr_SetString(PyExc_IndexError, "line number out of range");
        return NULL;
    }
    return PyList_GET_ITEM(b->lines, number - 1);
}

/* `not line.strip()`: empty or only Unicode whitespace, as str.strip() sees it. */
static int is_blank(PyObject *line) {
    int kind = PyUnicode_KIND(line);
    const void *data = PyUnicode_DATA(line);
    Py_ssize_t length = PyUnicode_GET_LENGTH(line);
    for (Py_ssize_t i = 0; i < length; i++)
        if (!Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, i))) return 0;
    return 1;
}

/* The largest code point of line[:length]: the kind a str holding it must have (a str is
 * compared by kind first, so a text one kind too wide would equal nothing). */
static Py_UCS4 max_char(PyObject *line, Py_ssize_t length) {
    if (length == PyUnicode_GET_LENGTH(line) || PyUnicode_IS_ASCII(line))
        return PyUnicode_MAX_CHAR_VALUE(line);
    int kind = PyUnicode_KIND(line);
    const void *data = PyUnicode_DATA(line);
    Py_UCS4 largest = 0;
    for (Py_ssize_t i = 0; i < length; i++) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (c > largest) largest = c;
    }
    return largest;
}

/* Walk lines start..end as `"\n".join(...)[:max_chunk_chars]` takes them: `into` NULL,
 * measure (*length, *largest); else copy them into it. 0, or -1 with an error set. */
static int join_pass(const Builder *b, Py_ssize_t start, Py_ssize_t end, PyObject *into,
                     Py_ssize_t *length, Py_UCS4 *largest) {
    Py_ssize_t at = 0;
    for (Py_ssize_t number = start; number <= end && at < max_chunk_chars; number++) {
        if (number > start) {
            if (into != NULL) PyUnicode_WRITE(PyUnicode_KIND(into), PyUnicode_DATA(into), at, '\n');
            if (++at == max_chunk_chars) break;
        }
        PyObject *line = line_at(b, number);
        if (line == NULL) return -1;
        Py_ssize_t take = PyUnicode_GET_LENGTH(line);
        if (take > max_chunk_chars - at) take = max_chunk_chars - at;
        if (into == NULL) {
            Py_UCS4 c = max_char(line, take);
            if (c > *largest) *largest = c;
        } else if (take > 0 && PyUnicode_CopyCharacters(into, at, line, 0, take) < 0) {
            return -1;
        }
        at += take;
    }
    *length = at;
    return 0;
}

/* "\n".join(lines[start-1:end])[:max_chunk_chars], made once at its final size. */
static PyObject *join_lines(const Builder *b, Py_ssize_t start, Py_ssize_t end) {
    if (start == end) { /* one line: join and a slice that keeps it all return it as is */
        PyObject *line = line_at(b, start);
        if (line == NULL) return NULL;
        if (PyUnicode_CheckExact(line) && PyUnicode_GET_LENGTH(line) <= max_chunk_chars)
            return Py_NewRef(line);
    }
    Py_ssize_t length = 0;
    Py_UCS4 largest = 0;
    if (join_pass(b, start, end, NULL, &length, &largest) < 0) return NULL;
    PyObject *text = PyUnicode_New(length, largest);
    if (text == NULL) return NULL;
    if (join_pass(b, start, end, text, &length, &largest) < 0) {
        Py_DECREF(text);
        return NULL;
    }
    return text;
}

/* Chunk(start, end, symbol, kind, text, idents) without calling its __init__: a bare
 * instance (`object.__new__`, as pickle makes one) with each slot set by its descriptor. */
static PyObject *new_chunk(Py_ssize_t start, Py_ssize_t end, PyObject *symbol,
                           PyObject *kind, PyObject *text, PyObject *idents) {
    PyTypeObject *type = (PyTypeObject *)chunk_type;
    PyObject *chunk = type->tp_new(type, empty_tuple, NULL);
    if (chunk == NULL) return NULL;
    PyObject *values[6] = {PyLong_FromSsize_t(start), PyLong_FromSsize_t(end), symbol, kind,
                           text, idents};
    int failed = values[0] == NULL || values[1] == NULL;
    for (int i = 0; i < 6 && !failed; i++) {
        PyObject *slot = chunk_slots[i];
        failed = Py_TYPE(slot)->tp_descr_set(slot, chunk, values[i]) < 0;
    }
    Py_XDECREF(values[0]);
    Py_XDECREF(values[1]);
    if (failed) Py_CLEAR(chunk);
    return chunk;
}

/* `_Builder.add`: one chunk of lines start..end, less the blank lines at either end. */
static int add(Builder *b, Py_ssize_t start, Py_ssize_t end, PyObject *symbol, PyObject *kind) {
    PyObject *line;
    for (; start <= end; start++) {
        if ((line = line_at(b, start)) == NULL) return -1;
        if (!is_blank(line)) break;
    }
    for (; end >= start; end--) {
        if ((line = line_at(b, end)) == NULL) return -1;
        if (!is_blank(line)) break;
    }
    if (start > end) return 0;
    PyObject *text = join_lines(b, start, end);
    if (text == NULL) return -1;
    PyObject *idents = NULL, *chunk = NULL;
    word_scan_clear(&b->words);
    if (word_scan_text(&b->words, symbol) == 0 && word_scan_text(&b->words, text) == 0 &&
        (idents = word_scan_result(&b->words)) != NULL)
        chunk = new_chunk(start, end, symbol, kind, text, idents);
    Py_DECREF(text);
    Py_XDECREF(idents);
    if (chunk == NULL) return -1;
    int appended = PyList_Append(b->chunks, chunk);
    Py_DECREF(chunk);
    return appended;
}

/* `_Builder.windows`: lines start..end in chunks of window_lines. */
static int windows(Builder *b, Py_ssize_t start, Py_ssize_t end, PyObject *symbol,
                   PyObject *kind) {
    for (Py_ssize_t first = start; first <= end; first += window_lines) {
        Py_ssize_t last = end - first < window_lines ? end : first + window_lines - 1;
        if (add(b, first, last, symbol, kind) < 0) return -1;
    }
    return 0;
}

/* `_nest`: nodes[0..count) (sorted by start, longest first) as a containment forest
 * under nodes[count], the whole file. `stack` has room for `count` indexes. */
static void nest(Node *nodes, Py_ssize_t count, Py_ssize_t *stack) {
    Py_ssize_t depth = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        Node *node = &nodes[i];
        while (depth > 0 && !(nodes[stack[depth - 1]].start <= node->start &&
                              node->end <= nodes[stack[depth - 1]].end))
            depth--;
        Node *parent = &nodes[depth > 0 ? stack[depth - 1] : count];
        if (parent->last_child < 0)
            parent->first_child = i;
        else
            nodes[parent->last_child].next_sibling = i;
        parent->last_child = i;
        stack[depth++] = i;
    }
}

/* `_Builder.span` and `_Builder.definition`, which call each other once per nesting
 * level, as a loop over a stack of open spans: a file's nesting is not bounded by the C
 * stack. A span's cursor moves past a child before the child's own chunks are made, as
 * those do not read it. `open` has room for every node. */
typedef struct {
    Py_ssize_t owner, cursor, child;
} OpenSpan;

static int walk(Builder *b, Node *nodes, Py_ssize_t root, OpenSpan *open) {
    Py_ssize_t depth = 0;
    open[0] = (OpenSpan){root, nodes[root].start, nodes[root].first_child};
    while (depth >= 0) {
        OpenSpan *span = &open[depth];
        const Node *owner = &nodes[span->owner];
        if (span->child < 0) { /* the lines after the last child */
            if (windows(b, span->cursor, owner->end, owner->symbol, owner->kind) < 0) return -1;
            depth--;
            continue;
        }
        Py_ssize_t index = span->child;
        const Node *child = &nodes[index];
        span->child = child->next_sibling;
        if (child->start > span->cursor &&
            windows(b, span->cursor, child->start - 1, owner->symbol, owner->kind) < 0)
            return -1;
        if (span->cursor < child->end + 1) span->cursor = child->end + 1;
        /* A document section with subsections is split at them (see chunks.py). */
        int split_section = child->heading && child->first_child >= 0;
        int failed = 0;
        if (child->end - child->start + 1 <= max_chunk_lines && !split_section)
            failed = add(b, child->start, child->end, child->symbol, child->kind);
        else if (child->first_child >= 0)
            open[++depth] = (OpenSpan){index, child->start, child->first_child};
        else
            failed = windows(b, child->start, child->end, child->symbol, child->kind);
        if (failed < 0) return -1;
    }
    return 0;
}

/* A definition's line attribute as a Py_ssize_t; beyond +-PY_SSIZE_T_MAX/4 it is clamped
 * (it is then out of the file either way, and sums of two stay in range). */
static int line_number(PyObject *definition, PyObject *name, Py_ssize_t *out) {
    PyObject *value = PyObject_GetAttr(definition, name);
    if (value == NULL) return -1;
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "Definition.%U must be an int, not %.100s", name,
                     Py_TYPE(value)->tp_name);
        Py_DECREF(value);
        return -1;
    }
    int overflow;
    long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
    Py_DECREF(value);
    if (number == -1 && PyErr_Occurred()) return -1;
    const long long limit = PY_SSIZE_T_MAX / 4;
    *out = (Py_ssize_t)(overflow > 0 || number > limit ? limit
                        : overflow < 0 || number < -limit ? -limit
                                                         : number);
    return 0;
}

/* A definition's qualname or kind, which must be a str (new reference). */
static PyObject *text_attribute(PyObject *definition, PyObject *name) {
    PyObject *value = PyObject_GetAttr(definition, name);
    if (value != NULL && !PyUnicode_Check(value)) {
        PyErr_Format(PyExc_TypeError, "Definition.%U must be a str, not %.100s", name,
                     Py_TYPE(value)->tp_name);
        Py_CLEAR(value);
    }
    return value;
}

/* Read one definition into *node: 1 if it starts inside the file (its end clipped to
 * the file, as build_chunks_py does), 0 if it is left out, -1 on an error. */
static int read_definition(PyObject *definition, Py_ssize_t line_count, Node *node) {
    if (line_number(definition, name_chunk_start, &node->start) < 0) return -1;
    if (node->start == 0 && line_number(definition, name_start_line, &node->start) < 0)
        return -1;
    if (node->start < 1 || node->start > line_count) return 0;
    if (line_number(definition, name_end_line, &node->end) < 0) return -1;
    if (node->end > line_count) node->end = line_count;
    if ((node->symbol = text_attribute(definition, name_qualname)) == NULL) return -1;
    if ((node->kind = text_attribute(definition, name_kind)) == NULL) {
        Py_CLEAR(node->symbol);
        return -1;
    }
    node->heading = PyUnicode_CompareWithASCIIString(node->kind, "heading") == 0;
    node->first_child = node->last_child = node->next_sibling = -1;
    return 1;
}

/* The definitions that start inside the file, then the whole file, in nodes[0..*count]. */
static Node *read_nodes(PyObject *definitions, Py_ssize_t line_count, Py_ssize_t *count) {
    PyObject *sequence = PySequence_Fast(definitions, "definitions must be a sequence");
    if (sequence == NULL) return NULL;
    Py_ssize_t size = PySequence_Fast_GET_SIZE(sequence);
    Node *nodes = PyMem_Calloc((size_t)size + 1, sizeof(Node));
    *count = 0;
    int failed = nodes == NULL;
    if (failed) PyErr_NoMemory();
    /* The size is read again: an attribute's getter could shorten a list. */
    for (Py_ssize_t i = 0; !failed && i < size && i < PySequence_Fast_GET_SIZE(sequence); i++) {
        PyObject *definition = Py_NewRef(PySequence_Fast_GET_ITEM(sequence, i));
        int kept = read_definition(definition, line_count, &nodes[*count]);
        Py_DECREF(definition);
        failed = kept < 0;
        *count += kept > 0;
    }
    Py_DECREF(sequence);
    if (failed) {
        for (Py_ssize_t i = 0; nodes != NULL && i < *count; i++) {
            Py_DECREF(nodes[i].symbol);
            Py_DECREF(nodes[i].kind);
        }
        PyMem_Free(nodes);
        return NULL;
    }
    return nodes;
}

static int builder_start(Builder *b, PyObject *lines) {
    if (chunk_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_words.configure() was not called");
        return -1;
    }
    if (!PyList_Check(lines)) {
        PyErr_Format(PyExc_TypeError, "lines must be a list, not %.100s", Py_TYPE(lines)->tp_name);
        return -1;
    }
    /* A copy: a collection while Chunks are made can run a __del__ that changes a list. */
    b->line_count = PyList_GET_SIZE(lines);
    if ((b->lines = PyList_GetSlice(lines, 0, b->line_count)) == NULL) return -1;
    for (Py_ssize_t i = 0; i < b->line_count; i++) {
        PyObject *line = PyList_GET_ITEM(b->lines, i);
        if (!PyUnicode_Check(line)) {
            PyErr_Format(PyExc_TypeError, "lines must be str, not %.100s",
                         Py_TYPE(line)->tp_name);
            return -1;
        }
    }
    b->chunks = PyList_New(0);
    return b->chunks == NULL || word_scan_init(&b->words) < 0 ? -1 : 0;
}

/* The chunks, or NULL (and the chunks so far dropped) if `failed`. */
static PyObject *builder_finish(Builder *b, int failed) {
    word_scan_free(&b->words);
    Py_CLEAR(b->lines);
    if (failed) Py_CLEAR(b->chunks);
    return b->chunks;
}

PyObject *chunks_build(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "build_chunks() takes lines, definitions, language");
        return NULL;
    }
    Builder b = {0};
    if (builder_start(&b, args[0]) < 0) return builder_finish(&b, 1);
    if (b.line_count == 0) return builder_finish(&b, 0);
    Py_ssize_t count;
    Node *nodes = read_nodes(args[1], b.line_count, &count);
    if (nodes == NULL) return builder_finish(&b, 1);
    int markdown = PyUnicode_Check(args[2]) &&
                   PyUnicode_CompareWithASCIIString(args[2], "markdown") == 0;
    Node *file = &nodes[count];
    *file = (Node){1, b.line_count, empty_str, markdown ? kind_section : kind_module, 0,
                   -1, -1, -1};
    /* One block for nest()'s stack (count indexes), then walk()'s (count + 1 spans). */
    void *stacks = PyMem_Malloc((size_t)(count + 1) * sizeof(OpenSpan));
    int failed = stacks == NULL;
    if (failed) {
        PyErr_NoMemory();
    } else {
        nest(nodes, count, stacks);
        failed = walk(&b, nodes, count, stacks) < 0;
    }
    PyMem_Free(stacks);
    for (Py_ssize_t i = 0; i < count; i++) {
        Py_DECREF(nodes[i].symbol);
        Py_DECREF(nodes[i].kind);
    }
    PyMem_Free(nodes);
    return builder_finish(&b, failed);
}

PyObject *chunks_window(PyObject *module, PyObject *lines) {
    (void)module;
    Builder b = {0};
    if (builder_start(&b, lines) < 0) return builder_finish(&b, 1);
    return builder_finish(&b, windows(&b, 1, b.line_count, empty_str, kind_text) < 0);
}

/* Check `type` is a slotted class with exactly Chunk's fields, and keep its slots'
 * descriptors: a field added to Chunk and not here must fail loudly, at import. */
static int take_chunk_type(PyObject *type) {
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "configure() takes the Chunk class");
        return -1;
    }
    PyObject *names = PyTuple_New(6), *slots = PyObject_GetAttrString(type, "__slots__");
    int same = -1;
    for (int i = 0; names != NULL && i < 6; i++) {
        PyObject *name = PyUnicode_FromString(slot_names[i]);
        if (name == NULL) break;
        PyTuple_SET_ITEM(names, i, name);
        if (i == 5 && slots != NULL) same = PyObject_RichCompareBool(slots, names, Py_EQ);
    }
    Py_XDECREF(names);
    Py_XDECREF(slots);
    if (same < 0) return -1;
    if (same == 0 || PyObject_HasAttrString(type, "__post_init__")) {
        PyErr_SetString(PyExc_TypeError, "Chunk's fields are not the ones _chunks.c sets");
        return -1;
    }
    for (int i = 0; i < 6; i++) {
        PyObject *slot = PyObject_GetAttrString(type, slot_names[i]);
        if (slot == NULL) return -1;
        if (!Py_IS_TYPE(slot, &PyMemberDescr_Type)) {
            Py_DECREF(slot);
            PyErr_Format(PyExc_TypeError, "Chunk.%s is not a slot", slot_names[i]);
            return -1;
        }
        Py_XSETREF(chunk_slots[i], slot);
    }
    Py_XSETREF(chunk_type, Py_NewRef(type));
    return 0;
}

static int intern(PyObject **into, const char *text) {
    if (*into == NULL) *into = PyUnicode_InternFromString(text);
    return *into == NULL ? -1 : 0;
}

PyObject *chunks_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "configure() takes Chunk and the three limits");
        return NULL;
    }
    Py_ssize_t limits[3];
    for (int i = 0; i < 3; i++) {
        limits[i] = PyLong_AsSsize_t(args[i + 1]);
        if (limits[i] == -1 && PyErr_Occurred()) return NULL;
        if (limits[i] < 1) {
            PyErr_SetString(PyExc_ValueError, "configure(): the limits must be positive");
            return NULL;
        }
    }
    if (intern(&empty_str, "") < 0 || intern(&kind_module, "module") < 0 ||
        intern(&kind_section, "section") < 0 || intern(&kind_text, "text") < 0 ||
        intern(&name_chunk_start, "chunk_start") < 0 || intern(&name_start_line, "start_line") < 0 ||
        intern(&name_end_line, "end_line") < 0 || intern(&name_qualname, "qualname") < 0 ||
        intern(&name_kind, "kind") < 0)
        return NULL;
    if (empty_tuple == NULL && (empty_tuple = PyTuple_New(0)) == NULL) return NULL;
    if (take_chunk_type(args[0]) < 0) return NULL;
    max_chunk_lines = limits[0];
    window_lines = limits[1];
    max_chunk_chars = limits[2];
    Py_RETURN_NONE;
}
