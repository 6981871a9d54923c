/* tune2048's engine protocol, version 1 (docs/engine-protocol.md), for an engine in C or C++: the
 * request loop, the game loop with its seeded spawns and transcript, and an engine's own loop
 * (`--play`), around what the engine gives: its parameters, how it picks and plays a move.
 * Included by examples/engines/c_engine.c and examples/engines/nneonneo/driver.cpp.
 *
 * All of the protocol: `float` and `int` parameters, with bounds or without, and where one
 * acts (`acts=`); fixed depths from any lowest one, `auto`, and `nodes:N` budgets. The fields
 * marked optional below may be left out of an initializer: an adapter written before them
 * declares float parameters with bounds, depth:0 to its max_depth, and auto, as it did.
 *
 * Boards are 64-bit words of 4-bit ranks (0 empty, r the tile 2^r), cell i (row by row from the
 * top left, as the protocol numbers cells) in bits 4i to 4i+3. Directions are 0 up, 1 down,
 * 2 left, 3 right. Spawns: a 2, or a 4 one time in ten, on an empty cell chosen uniformly, from
 * splitmix64 seeded with the game's seed.
 */
#ifndef TUNE2048_PROTOCOL_H
#define TUNE2048_PROTOCOL_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROTOCOL_MAX_LINE 4096
#define PROTOCOL_MAX_DIGITS 12  /* of a search's N (depth:N, nodes:N), as tune2048 sends it */
#define SEARCH_AUTO (-1)        /* the depth `choose` gets for `auto`: the engine's own rule */

typedef struct {
    const char *name;
    double value, low, high;  /* value: the default until set; low and high NAN: no bounds */
    /* Optional (left out, zero: as before them): */
    int integer;              /* 1: an `int` parameter, declared and set whole; 0: a `float` */
    const char *acts;         /* NULL, or a search where it changes play ("depth:1", "auto"), for
                                 one that changes nothing at the cheapest search: the check
                                 moves it there */
} protocol_param;

typedef struct {
    const char *name;         /* its name and version */
    protocol_param *params;
    int param_count;
    int max_depth;            /* it searches depth:min_depth to depth:max_depth (none where
                                 max_depth < min_depth) */
    /* a parameter was set: the engine rebuilds what depends on it before the next game */
    void (*changed)(int param);
    /* before each game: rebuild what a changed parameter invalidated, and clear whatever a game
       leaves behind (caches, transposition tables, counters that steer play): a game depends
       only on its seed, the values and the search, never on the games before it */
    void (*prepare)(void);
    /* the move to play at `depth` chance layers (SEARCH_AUTO: its rule), -1 where none is
       legal; adds the positions its search evaluated */
    int (*choose)(uint64_t board, int depth, uint64_t *positions);
    /* the board after a legal move, and the points it earns */
    uint64_t (*move)(uint64_t board, int direction, uint64_t *points);
    /* Optional (left out, zero: as before them): */
    int min_depth;            /* its lowest depth (0) */
    int no_auto;              /* 1: no rule of its own, no `search auto` (0: `auto` declared) */
    /* NULL, or the move to play within a budget of `nodes` evaluated positions (`search
       nodes`: nodes:N, N from 1), as `choose` */
    int (*choose_nodes)(uint64_t board, uint64_t nodes, uint64_t *positions);
} protocol_engine;

/* A search request: depth:N (depth N, SEARCH_AUTO for auto) or nodes:N (nodes N). */
typedef struct {
    int valid;
    int depth;
    uint64_t nodes;  /* 0 unless nodes:N */
} protocol_search;

static const char *const PROTOCOL_DIRECTIONS[] = {"up", "down", "left", "right"};

static void protocol_say(const char *line) {
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);  /* a pipe is buffered: tune2048 would wait for a line still here */
}

static uint64_t protocol_random(uint64_t *state) {  /* splitmix64 */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static int protocol_rank(uint64_t board, int cell) { return (int)((board >> (4 * cell)) & 0xF); }

/* The board with a spawn on it; its cell and rank. */
static uint64_t protocol_spawn(uint64_t board, uint64_t *rng, int *cell, int *rank) {
    int empty = 0;
    for (int i = 0; i < 16; i++) empty += protocol_rank(board, i) == 0;
    int pick = (int)(protocol_random(rng) % (uint64_t)empty);
    *rank = protocol_random(rng) % 10 == 0 ? 2 : 1;
    for (int i = 0; i < 16; i++) {
        if (protocol_rank(board, i) == 0 && pick-- == 0) {
            *cell = i;
            return board | (uint64_t)*rank << (4 * i);
        }
    }
    abort();  /* unreachable: the board had an empty cell */
}

static void protocol_say_spawn(int cell, int rank) {
    char line[64];
    snprintf(line, sizeof line, "spawn cell=%d tile=%d", cell, 1 << rank);
    protocol_say(line);
}

/* One game from an empty board: its transcript first if asked, then its result line. */
static void protocol_play_game(const protocol_engine *engine, uint64_t seed,
                               protocol_search search, int trace) {
    char line[256];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    engine->prepare();
    uint64_t rng = seed, board = 0, score = 0, moves = 0, positions = 0;
    int cell, rank, direction, largest = 0;
    for (int i = 0; i < 2; i++) {
        board = protocol_spawn(board, &rng, &cell, &rank);
        if (trace) protocol_say_spawn(cell, rank);
    }
    while ((direction = search.nodes ? engine->choose_nodes(board, search.nodes, &positions)
                                     : engine->choose(board, search.depth, &positions)) >= 0) {
        uint64_t points;
        board = engine->move(board, direction, &points);
        score += points;
        moves++;
        if (trace) {
            char hex[17];
            for (int i = 0; i < 16; i++) hex[i] = "0123456789abcdef"[protocol_rank(board, i)];
            hex[16] = '\0';
            snprintf(line, sizeof line, "move dir=%s board=%s", PROTOCOL_DIRECTIONS[direction],
                     hex);
            protocol_say(line);
        }
        board = protocol_spawn(board, &rng, &cell, &rank);
        if (trace) protocol_say_spawn(cell, rank);
    }
    for (int i = 0; i < 16; i++)
        if (protocol_rank(board, i) > largest) largest = protocol_rank(board, i);
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    snprintf(line, sizeof line,
             "game seed=%llu score=%llu tile=%d moves=%llu positions=%llu seconds=%.6f",
             (unsigned long long)seed, (unsigned long long)score, 1 << largest,
             (unsigned long long)moves, (unsigned long long)positions, seconds);
    protocol_say(line);
}

/* A search's N: 1 to PROTOCOL_MAX_DIGITS decimal digits; -1 for anything else. */
static long long protocol_parse_count(const char *text) {
    size_t n = strlen(text);
    if (n == 0 || n > PROTOCOL_MAX_DIGITS || strspn(text, "0123456789") != n) return -1;
    return strtoll(text, NULL, 10);
}

/* depth:N within the engine's depths, auto or nodes:N where it declares them; else not valid. */
static protocol_search protocol_parse_search(const protocol_engine *engine, const char *text) {
    protocol_search search = {0, 0, 0};
    long long n;
    if (strcmp(text, "auto") == 0) {
        search.valid = !engine->no_auto;
        search.depth = SEARCH_AUTO;
    } else if (strncmp(text, "depth:", 6) == 0) {
        n = protocol_parse_count(text + 6);
        search.valid = n >= engine->min_depth && n >= 0 && n <= engine->max_depth;
        search.depth = (int)n;
    } else if (strncmp(text, "nodes:", 6) == 0) {
        n = protocol_parse_count(text + 6);
        search.valid = engine->choose_nodes != NULL && n >= 1;
        search.nodes = (uint64_t)n;
    }
    return search;
}

/* What it searches, as an error says it: "depth:0 to depth:4, auto, nodes:N". */
static void protocol_searches(const protocol_engine *engine, char *text, size_t size) {
    int used = 0;
    text[0] = '\0';
    if (engine->max_depth >= engine->min_depth)
        used += snprintf(text, size, "depth:%d to depth:%d", engine->min_depth,
                         engine->max_depth);
    if (!engine->no_auto)
        used += snprintf(text + used, size - used, "%sauto", used ? ", " : "");
    if (engine->choose_nodes)
        snprintf(text + used, size - used, "%snodes:N", used ? ", " : "");
}

/* A seed is 0 to 2^64 - 1, up to 20 digits (tune2048 validates on seeds from 2^63 up). */
static int protocol_parse_seed(const char *text, uint64_t *seed) {
    size_t n = strlen(text);
    if (n == 0 || n > 20 || strspn(text, "0123456789") != n) return 0;
    if (n == 20 && strcmp(text, "18446744073709551615") > 0) return 0;
    *seed = strtoull(text, NULL, 10);
    return 1;
}

static void protocol_answer(const protocol_engine *engine, char *request) {
    static char *words[PROTOCOL_MAX_LINE / 2 + 1];
    char reply[PROTOCOL_MAX_LINE + 64];
    int n = 0;
    for (char *word = strtok(request, " "); word && n < PROTOCOL_MAX_LINE / 2 + 1;
         word = strtok(NULL, " "))
        words[n++] = word;
    if (n == 0) return;
    if (strcmp(words[0], "set") == 0 && n == 3) {
        for (int i = 0; i < engine->param_count; i++) {
            if (strcmp(words[1], engine->params[i].name) != 0) continue;
            char *end;
            double value = strtod(words[2], &end);
            if (*end != '\0' || !isfinite(value)) {
                snprintf(reply, sizeof reply, "error %s: not a number: %.64s", words[1],
                         words[2]);
                protocol_say(reply);
                return;
            }
            if (engine->params[i].integer && value != floor(value)) {
                snprintf(reply, sizeof reply, "error %s: an int parameter, not whole: %.64s",
                         words[1], words[2]);
                protocol_say(reply);
                return;
            }
            engine->params[i].value = value;
            engine->changed(i);
            protocol_say("ok");
            return;
        }
        snprintf(reply, sizeof reply, "error no parameter named %.64s", words[1]);
        protocol_say(reply);
    } else if ((strcmp(words[0], "play") == 0 || strcmp(words[0], "trace") == 0) && n >= 3) {
        protocol_search search = protocol_parse_search(engine, words[1]);
        uint64_t seed;
        if (!search.valid) {
            char searches[128];
            protocol_searches(engine, searches, sizeof searches);
            snprintf(reply, sizeof reply, "error search %.64s not supported (%s)", words[1],
                     searches);
            protocol_say(reply);
            return;
        }
        for (int i = 2; i < n; i++) {
            if (!protocol_parse_seed(words[i], &seed)) {
                snprintf(reply, sizeof reply, "error not a seed: %.64s", words[i]);
                protocol_say(reply);
                return;
            }
        }
        for (int i = 2; i < n; i++) {
            protocol_parse_seed(words[i], &seed);
            protocol_play_game(engine, seed, search, words[0][0] == 't');
        }
        protocol_say("done");
    } else {
        protocol_say("error unknown request");
    }
}

/* The engine's main: `--play SEARCH SEED...` plays the games in its own loop and prints their
 * lines, without the protocol; otherwise the protocol on standard input and output. */
static int protocol_main(const protocol_engine *engine, int argc, char **argv) {
    static char line[PROTOCOL_MAX_LINE + 2];
    uint64_t seed;
    if (argc >= 2 && strcmp(argv[1], "--play") == 0) {
        protocol_search search = {0, 0, 0};
        if (argc >= 3) search = protocol_parse_search(engine, argv[2]);
        if (!search.valid) {
            protocol_searches(engine, line, sizeof line);
            fprintf(stderr, "usage: %s --play SEARCH SEED... (SEARCH: %s)\n", argv[0], line);
            return 2;
        }
        for (int i = 3; i < argc; i++) {
            if (!protocol_parse_seed(argv[i], &seed)) {
                fprintf(stderr, "%s: not a seed: %s\n", argv[0], argv[i]);
                return 2;
            }
            protocol_play_game(engine, seed, search, 0);
        }
        return 0;
    }
    if (!fgets(line, sizeof line, stdin) || strncmp(line, "tune2048 ", 9) != 0) return 1;
    snprintf(line, sizeof line, "name %s", engine->name);
    protocol_say(line);
    for (int i = 0; i < engine->param_count; i++) {
        const protocol_param *p = &engine->params[i];
        int used = p->integer
            ? snprintf(line, sizeof line, "param %s int %.0f", p->name, p->value)
            : snprintf(line, sizeof line, "param %s float %.9g", p->name, p->value);
        if (!isnan(p->low) && !isnan(p->high))
            used += snprintf(line + used, sizeof line - used, p->integer ? " %.0f %.0f"
                             : " %.17g %.17g", p->low, p->high);
        if (p->acts) snprintf(line + used, sizeof line - used, " acts=%s", p->acts);
        protocol_say(line);
    }
    if (engine->max_depth >= engine->min_depth) {
        snprintf(line, sizeof line, "search depth %d %d", engine->min_depth, engine->max_depth);
        protocol_say(line);
    }
    if (!engine->no_auto) protocol_say("search auto");
    if (engine->choose_nodes) protocol_say("search nodes");
    protocol_say("ready 1");
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, "quit") == 0) return 0;
        protocol_answer(engine, line);
    }
    return 0;
}

#endif
