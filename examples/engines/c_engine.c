/* A compact 2048 expectimax engine in C that speaks tune2048's engine protocol, version 1
 * (docs/engine-protocol.md): the example of an engine that is not ours, built by the system's C
 * compiler and tuned through the protocol.
 *
 * The board is a 64-bit word, one 4-bit rank a cell (0 empty, r the tile 2^r), cell i (row by
 * row from the top left, as the protocol numbers them) in bits 4i to 4i+3, so that a row is 16
 * bits. Moves and the heuristic are looked up per row in tables of 65,536 entries; columns are
 * rows of the transposed board. The heuristic is the classic row-based one (empty cells,
 * merges, monotonicity, a sum of powers, a constant per line for a position that is not lost),
 * every constant a protocol parameter. The search is expectimax: `depth:0` picks the move whose
 * board the heuristic values most, `depth:d` averages over the spawns of d chance layers (a
 * position with no legal move is worth 0, which is what the lost penalty is measured against),
 * skipping branches less likely than 1e-4; `auto` picks 1 to 3 layers by the number of distinct
 * tiles. Spawns come from a splitmix64 generator seeded with the game's seed.
 *
 * Build:  cc -O2 -o examples/engines/c_engine examples/engines/c_engine.c -lm
 * Check:  tune engine check -- examples/engines/c_engine
 * Its own loop, without the protocol (bench/engine_protocol.py compares the two):
 *         examples/engines/c_engine --play depth:2 1 2 3
 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NAME "c-example 1.0"
#define MAX_DEPTH 4
#define MIN_PROBABILITY 1e-4
#define MAX_LINE 4096
#define AUTO -1

typedef uint64_t board_t;

enum { UP, DOWN, LEFT, RIGHT };
static const char *const DIRECTIONS[] = {"up", "down", "left", "right"};

/* The parameters, in the order the engine declares them. */
typedef struct {
    const char *name;
    double value, low, high;
} param_t;

static param_t params[] = {
    {"lost_penalty", 200000.0, 0.0, 1000000.0},
    {"monotonicity_power", 4.0, 1.0, 8.0},
    {"monotonicity_weight", 47.0, 0.0, 1000.0},
    {"sum_power", 3.5, 1.0, 8.0},
    {"sum_weight", 11.0, 0.0, 1000.0},
    {"merges_weight", 700.0, 0.0, 10000.0},
    {"empty_weight", 270.0, 0.0, 10000.0},
};
enum { LOST_PENALTY, MONOTONICITY_POWER, MONOTONICITY_WEIGHT, SUM_POWER, SUM_WEIGHT,
       MERGES_WEIGHT, EMPTY_WEIGHT, PARAM_COUNT };

static uint16_t row_left[65536], row_right[65536];
static uint32_t row_points[65536];  /* points the row's left (or right) slide earns */
static double row_value[65536];
static int values_stale = 1;        /* a parameter changed since row_value was filled */
static uint64_t positions;          /* heuristic evaluations of the current game */

/* ---- rules --------------------------------------------------------------------------------- */

static int rank_at(uint16_t row, int i) { return (row >> (4 * i)) & 0xF; }

/* A row slid toward cell 0, equal neighbours merged once; a pair of 2^15 tiles stays (no
 * 2^16 fits a cell, and no game reaches it). */
static uint16_t slide_left(uint16_t row, uint32_t *points) {
    int tiles[4], count = 0, out[4] = {0, 0, 0, 0}, n = 0;
    for (int i = 0; i < 4; i++)
        if (rank_at(row, i)) tiles[count++] = rank_at(row, i);
    *points = 0;
    for (int i = 0; i < count; i++) {
        if (i + 1 < count && tiles[i] == tiles[i + 1] && tiles[i] < 15) {
            out[n++] = tiles[i] + 1;
            *points += 1u << (tiles[i] + 1);
            i++;
        } else {
            out[n++] = tiles[i];
        }
    }
    return (uint16_t)(out[0] | out[1] << 4 | out[2] << 8 | out[3] << 12);
}

static uint16_t reverse_row(uint16_t row) {
    return (uint16_t)((row >> 12) | ((row >> 4) & 0x00F0) | ((row << 4) & 0x0F00) | (row << 12));
}

static void build_move_tables(void) {
    for (uint32_t row = 0; row < 65536; row++) {
        uint32_t points;
        row_left[row] = slide_left((uint16_t)row, &points);
        row_points[row] = points;
        row_right[row] = reverse_row(slide_left(reverse_row((uint16_t)row), &points));
    }
}

/* Rows become columns: cell (r, c) goes to (c, r). */
static board_t transpose(board_t x) {
    board_t a1 = x & 0xF0F00F0FF0F00F0FULL;
    board_t a2 = x & 0x0000F0F00000F0F0ULL;
    board_t a3 = x & 0x0F0F00000F0F0000ULL;
    board_t a = a1 | (a2 << 12) | (a3 >> 12);
    board_t b1 = a & 0xFF00FF0000FF00FFULL;
    board_t b2 = a & 0x00FF00FF00000000ULL;
    board_t b3 = a & 0x00000000FF00FF00ULL;
    return b1 | (b2 >> 24) | (b3 << 24);
}

static uint16_t row_of(board_t board, int r) { return (uint16_t)(board >> (16 * r)); }

/* The board after a move (up and down are left and right on the transposed board), and the
 * points it earns. */
static board_t apply_move(board_t board, int direction, uint32_t *points) {
    board_t b = (direction == UP || direction == DOWN) ? transpose(board) : board;
    board_t moved = 0;
    *points = 0;
    for (int r = 0; r < 4; r++) {
        uint16_t row = row_of(b, r);
        int toward_start = direction == UP || direction == LEFT;
        uint16_t result = toward_start ? row_left[row] : row_right[row];
        *points += toward_start ? row_points[row] : row_points[reverse_row(row)];
        moved |= (board_t)result << (16 * r);
    }
    return (direction == UP || direction == DOWN) ? transpose(moved) : moved;
}

static int empty_cells(board_t board) {
    int n = 0;
    for (int i = 0; i < 16; i++)
        n += ((board >> (4 * i)) & 0xF) == 0;
    return n;
}

static int largest_rank(board_t board) {
    int best = 0;
    for (int i = 0; i < 16; i++) {
        int rank = (int)((board >> (4 * i)) & 0xF);
        if (rank > best) best = rank;
    }
    return best;
}

static int distinct_tiles(board_t board) {
    int seen = 0;
    for (int i = 0; i < 16; i++) seen |= 1 << ((board >> (4 * i)) & 0xF);
    seen &= ~1;  /* empty cells are no tile */
    return __builtin_popcount((unsigned)seen);
}

/* splitmix64: one 64-bit draw. */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* A 2 (or, one time in ten, a 4) on an empty cell chosen uniformly; its cell and tile. */
static board_t spawn(board_t board, uint64_t *rng, int *cell, int *tile) {
    int pick = (int)(next_random(rng) % (uint64_t)empty_cells(board));
    int rank = next_random(rng) % 10 == 0 ? 2 : 1;
    for (int i = 0; i < 16; i++) {
        if (((board >> (4 * i)) & 0xF) == 0 && pick-- == 0) {
            *cell = i;
            *tile = 1 << rank;
            return board | (board_t)rank << (4 * i);
        }
    }
    abort();  /* unreachable: the board had an empty cell */
}

/* ---- the heuristic ------------------------------------------------------------------------- */

static void build_value_table(void) {
    double p[PARAM_COUNT];
    for (int i = 0; i < PARAM_COUNT; i++) p[i] = params[i].value;
    for (uint32_t row = 0; row < 65536; row++) {
        int line[4];
        for (int i = 0; i < 4; i++) line[i] = rank_at((uint16_t)row, i);
        double sum = 0.0;
        int empty = 0, merges = 0, previous = 0, run = 0;
        for (int i = 0; i < 4; i++) {
            sum += pow(line[i], p[SUM_POWER]);
            if (line[i] == 0) {
                empty++;
            } else if (line[i] == previous) {
                run++;
            } else {
                if (run) merges += 1 + run;
                run = 0;
                previous = line[i];
            }
        }
        if (run) merges += 1 + run;
        double toward_start = 0.0, toward_end = 0.0;
        for (int i = 1; i < 4; i++) {
            double a = pow(line[i - 1], p[MONOTONICITY_POWER]);
            double b = pow(line[i], p[MONOTONICITY_POWER]);
            if (line[i - 1] > line[i]) toward_start += a - b;
            else toward_end += b - a;
        }
        row_value[row] = p[LOST_PENALTY] + p[EMPTY_WEIGHT] * empty + p[MERGES_WEIGHT] * merges
            - p[MONOTONICITY_WEIGHT] * (toward_start < toward_end ? toward_start : toward_end)
            - p[SUM_WEIGHT] * sum;
    }
    values_stale = 0;
}

static double value(board_t board) {
    board_t columns = transpose(board);
    double total = 0.0;
    for (int r = 0; r < 4; r++) total += row_value[row_of(board, r)] + row_value[row_of(columns, r)];
    positions++;
    return total;
}

/* ---- the search ---------------------------------------------------------------------------- */

static double chance_node(board_t board, int depth, double probability);

/* The best a move can do from a board that has just spawned: 0 where no move is legal. */
static double move_node(board_t board, int depth, double probability) {
    double best = 0.0;
    for (int direction = 0; direction < 4; direction++) {
        uint32_t points;
        board_t moved = apply_move(board, direction, &points);
        if (moved == board) continue;
        double worth = chance_node(moved, depth, probability);
        if (worth > best) best = worth;
    }
    return best;
}

/* A board after a move, valued over its spawns, `depth` chance layers deep. */
static double chance_node(board_t board, int depth, double probability) {
    if (depth == 0 || probability < MIN_PROBABILITY) return value(board);
    int n = empty_cells(board);
    double total = 0.0;
    for (int i = 0; i < 16; i++) {
        if ((board >> (4 * i)) & 0xF) continue;
        total += 0.9 * move_node(board | (board_t)1 << (4 * i), depth - 1, probability * 0.9 / n);
        total += 0.1 * move_node(board | (board_t)2 << (4 * i), depth - 1, probability * 0.1 / n);
    }
    return total / n;
}

/* The move to play, or -1 where none is legal. */
static int best_move(board_t board, int depth) {
    if (depth == AUTO) {
        int distinct = distinct_tiles(board);
        depth = distinct <= 6 ? 1 : distinct <= 9 ? 2 : 3;
    }
    int best = -1;
    double best_worth = -1.0;
    for (int direction = 0; direction < 4; direction++) {
        uint32_t points;
        board_t moved = apply_move(board, direction, &points);
        if (moved == board) continue;
        double worth = chance_node(moved, depth, 1.0);
        if (worth > best_worth) {
            best_worth = worth;
            best = direction;
        }
    }
    return best;
}

/* ---- games and the protocol ---------------------------------------------------------------- */

static void say(const char *line) {
    fputs(line, stdout);
    fputc('\n', stdout);
    fflush(stdout);
}

static void board_hex(board_t board, char out[17]) {
    for (int i = 0; i < 16; i++) out[i] = "0123456789abcdef"[(board >> (4 * i)) & 0xF];
    out[16] = '\0';
}

/* One game from an empty board: its transcript first if asked, then its result line. */
static void play_game(uint64_t seed, int depth, int trace) {
    char line[256], hex[17];
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    if (values_stale) build_value_table();
    uint64_t rng = seed;
    board_t board = 0;
    uint64_t score = 0, moves = 0;
    int cell, tile, direction;
    positions = 0;
    for (int i = 0; i < 2; i++) {
        board = spawn(board, &rng, &cell, &tile);
        if (trace) {
            snprintf(line, sizeof line, "spawn cell=%d tile=%d", cell, tile);
            say(line);
        }
    }
    while ((direction = best_move(board, depth)) >= 0) {
        uint32_t points;
        board = apply_move(board, direction, &points);
        score += points;
        moves++;
        if (trace) {
            board_hex(board, hex);
            snprintf(line, sizeof line, "move dir=%s board=%s", DIRECTIONS[direction], hex);
            say(line);
        }
        board = spawn(board, &rng, &cell, &tile);
        if (trace) {
            snprintf(line, sizeof line, "spawn cell=%d tile=%d", cell, tile);
            say(line);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    snprintf(line, sizeof line,
             "game seed=%llu score=%llu tile=%d moves=%llu positions=%llu seconds=%.6f",
             (unsigned long long)seed, (unsigned long long)score, 1 << largest_rank(board),
             (unsigned long long)moves, (unsigned long long)positions, seconds);
    say(line);
}

/* depth:N (0 to MAX_DEPTH) or auto; -2 for anything else. */
static int parse_search(const char *text) {
    if (strcmp(text, "auto") == 0) return AUTO;
    if (strncmp(text, "depth:", 6) == 0 && text[6] >= '0' && text[6] <= '0' + MAX_DEPTH &&
        text[7] == '\0')
        return text[6] - '0';
    return -2;
}

/* A seed: decimal digits only, at most 19 of them. */
static int parse_seed(const char *text, uint64_t *seed) {
    size_t n = strlen(text);
    if (n == 0 || n > 19 || strspn(text, "0123456789") != n) return 0;
    *seed = strtoull(text, NULL, 10);
    return 1;
}

static int split(char *line, char **words, int most) {
    int n = 0;
    for (char *word = strtok(line, " "); word && n < most; word = strtok(NULL, " "))
        words[n++] = word;
    return n;
}

static void answer(char *request) {
    char reply[MAX_LINE + 64];
    char *words[MAX_LINE / 2 + 1];
    int n = split(request, words, MAX_LINE / 2 + 1);
    if (n == 0) return;
    if (strcmp(words[0], "set") == 0 && n == 3) {
        for (int i = 0; i < PARAM_COUNT; i++) {
            if (strcmp(words[1], params[i].name) != 0) continue;
            char *end;
            double v = strtod(words[2], &end);
            if (*end != '\0' || !isfinite(v)) {
                snprintf(reply, sizeof reply, "error %s: not a number: %.64s", words[1], words[2]);
                say(reply);
                return;
            }
            params[i].value = v;
            values_stale = 1;
            say("ok");
            return;
        }
        snprintf(reply, sizeof reply, "error no parameter named %.64s", words[1]);
        say(reply);
    } else if ((strcmp(words[0], "play") == 0 || strcmp(words[0], "trace") == 0) && n >= 3) {
        int depth = parse_search(words[1]);
        if (depth == -2) {
            snprintf(reply, sizeof reply, "error search %.64s not supported (depth:0 to depth:%d, "
                     "auto)", words[1], MAX_DEPTH);
            say(reply);
            return;
        }
        uint64_t seed;
        for (int i = 2; i < n; i++) {
            if (!parse_seed(words[i], &seed)) {
                snprintf(reply, sizeof reply, "error not a seed: %.64s", words[i]);
                say(reply);
                return;
            }
        }
        for (int i = 2; i < n; i++) {
            parse_seed(words[i], &seed);
            play_game(seed, depth, words[0][0] == 't');
        }
        say("done");
    } else {
        say("error unknown request");
    }
}

/* Its own loop: `--play SEARCH SEED...` plays the games and prints their lines, no protocol. */
static int play_alone(int argc, char **argv) {
    int depth = argc >= 3 ? parse_search(argv[2]) : -2;
    uint64_t seed;
    if (depth == -2) {
        fprintf(stderr, "usage: c_engine --play depth:N|auto SEED...\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        if (!parse_seed(argv[i], &seed)) {
            fprintf(stderr, "c_engine: not a seed: %s\n", argv[i]);
            return 2;
        }
        play_game(seed, depth, 0);
    }
    return 0;
}

int main(int argc, char **argv) {
    static char line[MAX_LINE + 2];
    build_move_tables();
    if (argc >= 2 && strcmp(argv[1], "--play") == 0) return play_alone(argc, argv);
    if (!fgets(line, sizeof line, stdin) || strncmp(line, "tune2048 ", 9) != 0) return 1;
    say("name " NAME);
    for (int i = 0; i < PARAM_COUNT; i++) {
        char declared[256];
        snprintf(declared, sizeof declared, "param %s float %.17g %.17g %.17g", params[i].name,
                 params[i].value, params[i].low, params[i].high);
        say(declared);
    }
    char depths[64];
    snprintf(depths, sizeof depths, "search depth 0 %d", MAX_DEPTH);
    say(depths);
    say("search auto");
    say("ready 1");
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strcmp(line, "quit") == 0) return 0;
        answer(line);
    }
    return 0;
}
