/* tune2048's engine protocol, version 1 (docs/engine-protocol.md), for an engine in C or C++: the
 * request loop, the game loop with its seeded spawns and transcript, and an engine's own loop
 * (`--play`), around what the engine gives: its parameters, how it picks and plays a move.
 * Included by examples/engines/c_engine.c and examples/engines/nneonneo/driver.cpp.
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
#define SEARCH_AUTO (-1)  /* the engine's own depth rule */
#define SEARCH_BAD (-2)

typedef struct {
    const char *name;
    double value, low, high;  /* value: the default until set */
} protocol_param;

typedef struct {
    const char *name;         /* its name and version */
    protocol_param *params;
    int param_count;
    int max_depth;            /* it searches depth:0 to depth:max_depth, and auto */
    /* a parameter was set: the engine rebuilds what depends on it before the next game */
    void (*changed)(int param);
    /* before each game */
    void (*prepare)(void);
    /* the move to play at `depth` chance layers (SEARCH_AUTO: its rule), -1 where none is
       legal; adds the positions its search evaluated */
    int (*choose)(uint64_t board, int depth, uint64_t *positions);
    /* the board after a legal move, and the points it earns */
    uint64_t (*move)(uint64_t board, int direction, uint64_t *points);
} protocol_engine;

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
static void protocol_play_game(const protocol_engine *engine, uint64_t seed, int depth,
                               int trace) {
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
    while ((direction = engine->choose(board, depth, &positions)) >= 0) {
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

/* depth:N (0 to max_depth) or auto: the depth, SEARCH_AUTO, or SEARCH_BAD. */
static int protocol_parse_search(const char *text, int max_depth) {
    if (strcmp(text, "auto") == 0) return SEARCH_AUTO;
    if (strncmp(text, "depth:", 6) == 0 && text[6] >= '0' && text[6] <= '0' + max_depth &&
        text[7] == '\0')
        return text[6] - '0';
    return SEARCH_BAD;
}

/* A seed: decimal digits only, at most 19 of them. */
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
            engine->params[i].value = value;
            engine->changed(i);
            protocol_say("ok");
            return;
        }
        snprintf(reply, sizeof reply, "error no parameter named %.64s", words[1]);
        protocol_say(reply);
    } else if ((strcmp(words[0], "play") == 0 || strcmp(words[0], "trace") == 0) && n >= 3) {
        int depth = protocol_parse_search(words[1], engine->max_depth);
        uint64_t seed;
        if (depth == SEARCH_BAD) {
            snprintf(reply, sizeof reply, "error search %.64s not supported (depth:0 to "
                     "depth:%d, auto)", words[1], engine->max_depth);
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
            protocol_play_game(engine, seed, depth, words[0][0] == 't');
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
        int depth = argc >= 3 ? protocol_parse_search(argv[2], engine->max_depth) : SEARCH_BAD;
        if (depth == SEARCH_BAD) {
            fprintf(stderr, "usage: %s --play depth:0-%d|auto SEED...\n", argv[0],
                    engine->max_depth);
            return 2;
        }
        for (int i = 3; i < argc; i++) {
            if (!protocol_parse_seed(argv[i], &seed)) {
                fprintf(stderr, "%s: not a seed: %s\n", argv[0], argv[i]);
                return 2;
            }
            protocol_play_game(engine, seed, depth, 0);
        }
        return 0;
    }
    if (!fgets(line, sizeof line, stdin) || strncmp(line, "tune2048 ", 9) != 0) return 1;
    snprintf(line, sizeof line, "name %s", engine->name);
    protocol_say(line);
    for (int i = 0; i < engine->param_count; i++) {
        const protocol_param *p = &engine->params[i];
        snprintf(line, sizeof line, "param %s float %.9g %.17g %.17g", p->name, p->value, p->low,
                 p->high);
        protocol_say(line);
    }
    snprintf(line, sizeof line, "search depth 0 %d", engine->max_depth);
    protocol_say(line);
    protocol_say("search auto");
    protocol_say("ready 1");
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, "quit") == 0) return 0;
        protocol_answer(engine, line);
    }
    return 0;
}

#endif
