/* A compact 2048 expectimax engine in C that speaks tune2048's engine protocol, version 1
 * (docs/engine-protocol.md): the example of an engine outside tune2048's own, built by the
 * system's C compiler and tuned through the protocol.
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
 * tiles; `nodes:N` searches deeper while a budget of N positions a move holds the next depth.
 * The protocol, the game loop and its seeded spawns are protocol.h's, beside this file.
 *
 * Build:  cc -O2 -o examples/engines/c_engine examples/engines/c_engine.c -lm
 * Check:  tune engine check -- examples/engines/c_engine
 * Its own loop, without the protocol (bench/engine_protocol.py compares the two):
 *         examples/engines/c_engine --play depth:2 1 2 3
 */

#include "protocol.h"

#define NAME "c-example 1.0"
#define MAX_DEPTH 4
#define MIN_PROBABILITY 1e-4

typedef uint64_t board_t;

enum { UP, DOWN, LEFT, RIGHT };

/* The parameters, in the order the engine declares them, at their defaults: name, default,
 * bounds, whether whole (none is), and where one acts that changes nothing at depth:0 (the lost
 * penalty is a constant a line there, the same for every move; a search tells it from the 0 a
 * lost position is worth). */
static protocol_param params[] = {
    {"lost_penalty", 200000.0, 0.0, 1000000.0, 0, "depth:1"},
    {"monotonicity_power", 4.0, 1.0, 8.0, 0, NULL},
    {"monotonicity_weight", 47.0, 0.0, 1000.0, 0, NULL},
    {"sum_power", 3.5, 1.0, 8.0, 0, NULL},
    {"sum_weight", 11.0, 0.0, 1000.0, 0, NULL},
    {"merges_weight", 700.0, 0.0, 10000.0, 0, NULL},
    {"empty_weight", 270.0, 0.0, 10000.0, 0, NULL},
};
enum { LOST_PENALTY, MONOTONICITY_POWER, MONOTONICITY_WEIGHT, SUM_POWER, SUM_WEIGHT,
       MERGES_WEIGHT, EMPTY_WEIGHT, PARAM_COUNT };

static uint16_t row_left[65536], row_right[65536];
static uint32_t row_points[65536];  /* points the row's left (or right) slide earns */
static double row_value[65536];
static int values_stale = 1;        /* a parameter changed since row_value was filled */
static uint64_t positions;          /* heuristic evaluations so far */

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

static int distinct_tiles(board_t board) {
    int seen = 0;
    for (int i = 0; i < 16; i++) seen |= 1 << ((board >> (4 * i)) & 0xF);
    seen &= ~1;  /* empty cells are no tile */
    return __builtin_popcount((unsigned)seen);
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
    if (depth == SEARCH_AUTO) {
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

/* nodes:N: searches at depth 1, 2 and on, each deeper one only where it is predicted to fit in
 * what is left of the budget (the last depth's positions times its growth over the one before,
 * 16 at first); the deepest searched decides, and depth 1 is always searched. */
static int best_move_within(board_t board, uint64_t budget) {
    uint64_t start = positions;
    double last = 0.0, growth = 16.0;
    int best = -1;
    for (int depth = 1; depth <= MAX_DEPTH; depth++) {
        if (depth > 1 && (double)(positions - start) + last * growth > (double)budget) break;
        uint64_t before = positions;
        best = best_move(board, depth);
        if (best < 0) break;
        double spent = (double)(positions - before);
        if (last > 0.0) growth = spent / last;
        last = spent;
    }
    return best;
}

/* ---- what the protocol asks of it ---------------------------------------------------------- */

static void changed(int param) {
    (void)param;
    values_stale = 1;
}

static void prepare(void) {
    if (values_stale) build_value_table();
}

static int choose(uint64_t board, int depth, uint64_t *evaluated) {
    uint64_t before = positions;
    int direction = best_move(board, depth);
    *evaluated += positions - before;
    return direction;
}

static int choose_nodes(uint64_t board, uint64_t budget, uint64_t *evaluated) {
    uint64_t before = positions;
    int direction = best_move_within(board, budget);
    *evaluated += positions - before;
    return direction;
}

static uint64_t move(uint64_t board, int direction, uint64_t *points) {
    uint32_t earned;
    board_t moved = apply_move(board, direction, &earned);
    *points = earned;
    return moved;
}

int main(int argc, char **argv) {
    static const protocol_engine engine = {
        .name = NAME, .params = params, .param_count = PARAM_COUNT, .max_depth = MAX_DEPTH,
        .changed = changed, .prepare = prepare, .choose = choose, .move = move,
        .choose_nodes = choose_nodes};
    build_move_tables();
    return protocol_main(&engine, argc, argv);
}
