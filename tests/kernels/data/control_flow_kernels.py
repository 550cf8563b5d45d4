"""Kernels with every shape of structured control flow Python has: loops
nested to depth three, break and continue at each level, loop else
clauses, short-circuit and conditional expressions in loop conditions,
while True, and return from inside loops. Each writes what it computed to
out[thread * 8 : thread * 8 + 8]."""

import numpy as np
from numba import cuda


@cuda.jit("void(int64[:], int64)")
def break_outer_after_inner_loop(out, v):
    t = cuda.grid(1)
    for j in range(10):
        for q in range(3):
            pass
        if j == 1:
            break
    out[t * 8] = v + t


@cuda.jit("void(int64[:], int64)")
def count_in_inner_loop_break_outer(out, n):
    t = cuda.grid(1)
    count = 0
    for j in range(n):
        for q in range(3):
            count += 1
        if j == t % 3:
            break
    out[t * 8] = count
    out[t * 8 + 1] = n


@cuda.jit("void(int64[:], int64)")
def while_in_while_break(out, n):
    t = cuda.grid(1)
    i = 0
    total = 0
    while i < n:
        j = 0
        while j < n:
            total += j
            j += 1
            if j > t:
                break
        i += 1
        if total > 20:
            break
    out[t * 8] = total
    out[t * 8 + 1] = i


@cuda.jit("void(int64[:], int64)")
def while_true_nested(out, n):
    t = cuda.grid(1)
    steps = 0
    while True:
        while True:
            steps += 1
            if steps % 4 == 0:
                break
        if steps > n + t:
            break
    out[t * 8] = steps


@cuda.jit("void(int64[:], int64)")
def three_loops_break_each_level(out, n):
    t = cuda.grid(1)
    a = 0
    b = 0
    c = 0
    for i in range(n):
        for j in range(n):
            for k in range(n):
                c += 1
                if k == t % 2:
                    break
            b += 1
            if j == 2:
                break
        a += 1
        if i + t >= 3:
            break
    out[t * 8] = a
    out[t * 8 + 1] = b
    out[t * 8 + 2] = c


@cuda.jit("void(int64[:], int64)")
def inner_loop_in_untaken_branch(out, n):
    t = cuda.grid(1)
    x = t * 3
    for j in range(n):
        if n < 0:
            for q in range(3):
                x += q
        if j == 1:
            break
    out[t * 8] = x


@cuda.jit("void(int64[:], int64[:])")
def insertion_sort_local_array(out, values):
    t = cuda.grid(1)
    tmp = cuda.local.array(8, np.int64)
    for k in range(8):
        tmp[k] = values[(k * 5 + t) % values.size]
    for k in range(1, 8):
        key = tmp[k]
        j = k - 1
        while j >= 0 and tmp[j] > key:
            tmp[j + 1] = tmp[j]
            j -= 1
        tmp[j + 1] = key
    for k in range(8):
        out[t * 8 + k] = tmp[k]


@cuda.jit("void(int64[:], int64)")
def loop_else_clauses(out, n):
    t = cuda.grid(1)
    found = -1
    for i in range(n):
        if i * i > t * 4:
            found = i
            break
    else:
        found = 100
    out[t * 8] = found
    j = 0
    while j < n:
        j += 1
        if j == t:
            break
    else:
        j = 200 + j
    out[t * 8 + 1] = j
    for i in range(n):
        for k in range(n):
            if k > i:
                break
        else:
            out[t * 8 + 2] += 1


@cuda.jit("void(int64[:], int64)")
def continue_at_every_level(out, n):
    t = cuda.grid(1)
    s = 0
    for i in range(n):
        if i == t % 4:
            continue
        j = 0
        while j < n:
            j += 1
            if j % 2 == 0:
                continue
            for k in range(3):
                if k == 1:
                    continue
                s += i * 100 + j * 10 + k
    out[t * 8] = s


@cuda.jit("void(int64[:], int64[:])")
def short_circuit_loop_conditions(out, values):
    t = cuda.grid(1)
    i = 0
    while i < values.size and (values[i] != t or not i < 2):
        i += 1
    out[t * 8] = i
    j = values.size - 1
    while (j >= 0 and values[j] > 2) or j == values.size - 1:
        j -= 1
    out[t * 8 + 1] = j
    k = 0
    while (values[k] if k < values.size else 0) != 0 and k < t + 2:
        k += 1
    out[t * 8 + 2] = k


@cuda.jit(device=True)
def first_pair_summing_to(target, n):
    for i in range(n):
        for j in range(n):
            if i + j == target:
                return i, j
    return -1, -1


@cuda.jit("void(int64[:], int64)")
def return_from_nested_loops(out, n):
    t = cuda.grid(1)
    i, j = first_pair_summing_to(t, n)
    out[t * 8] = i
    out[t * 8 + 1] = j
    for a in range(n):
        while True:
            if a == t:
                out[t * 8 + 2] = a * 7
                return
            break
    out[t * 8 + 2] = -5
