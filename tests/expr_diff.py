#!/usr/bin/python3
"""tests/expr_diff.py: differential test of the expression language against python3 itself.

Generates expressions with a fixed seed (ints including negatives and zero, floats, strings, lists,
comparisons and chained comparisons, and/or/not, in/not in, ternaries, indexing, comprehensions,
builtins, precedence with randomly omitted parentheses), runs tests/expr_driver.c on them and evaluates
each with Python (same variables), then compares: identical repr, or the same exception class.

int64: mptune's ints are 64-bit and overflow is an error. Python is evaluated on a rewritten tree in
which every operator and call result that is an int outside int64 raises OverflowError, so the expected
outcome of such a case is OverflowError, exactly where mptune reports it (nothing is skipped). Likewise
a complex result (negative float ** fractional power) is expected as ValueError: mptune has no complex,
and str % x as TypeError: mptune has no printf-style formatting.

The driver also runs with --bool (mpt_expr_eval_bool, the constraint hot path), which must give
bool(result) for every successful case and the same exception class otherwise, and both again with
--slow (numeric fast path disabled), which must print exactly the same.

The expressions: a fixed list of documented cases, an edge table (every operator on every pair of 26
edge values, every builtin on each), and N (default 10,500) generated ones.

usage: expr_diff.py DRIVER [N] [SEED]
"""
import ast
import math
import random
import struct
import subprocess
import sys
import warnings

warnings.filterwarnings('ignore')

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

VARS = dict(a=3, b=-2, z=0, f=2.5, g=-0.5, s='ab', t=True, L=[1, 2, 3], E=[],
            F=[1.5, -2, True, 'x'], M=[[1, 2], [3]], n=-7, B=2**62)

BUILTINS = dict(range=range, list=list, len=len, min=min, max=max, abs=abs, int=int, float=float,
                round=round, sum=sum, bool=bool, str=str)


def _chk(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, int) and not INT64_MIN <= v <= INT64_MAX:
        raise OverflowError('int64')
    if isinstance(v, complex):
        raise ValueError('complex')
    return v


MAX_LIST, MAX_STR = 1 << 24, 1 << 28  # mptune's limits on one value (spaces/expr/value.h)


def _mul(x, y):
    """x * y, but a sequence repetition beyond mptune's size limits is a MemoryError (as in mptune)
    instead of gigabytes of memory"""
    for seq, k in ((x, y), (y, x)):
        if isinstance(seq, (str, list)) and isinstance(k, int) and not isinstance(seq, bool):
            if isinstance(seq, str) and len(seq) * max(k, 0) > MAX_STR:
                raise MemoryError('str')
            if isinstance(seq, list) and len(seq) * max(k, 0) > MAX_LIST:
                raise MemoryError('list')
    return x * y


def _pow(x, y):
    """x ** y; an int power that cannot fit int64 is OverflowError at once (Python would build it)"""
    if isinstance(x, int) and isinstance(y, int) and y > 64 and abs(x) > 1:
        raise OverflowError('int64')
    return x ** y


def _mod(x, y):
    """x % y; mptune has no printf-style string formatting: str % anything is a TypeError there"""
    if isinstance(x, str):
        raise TypeError('str %')
    return x % y


def _shl(x, y):
    """x << y; a shift that cannot fit int64 is OverflowError at once (Python would try to build it)"""
    if isinstance(x, int) and isinstance(y, int) and x != 0 and y >= 64:
        raise OverflowError('int64')
    return x << y


class Checked(ast.NodeTransformer):
    """wraps every operator and call result in _chk(...); `*`, `<<`, `**`, `%` go through _mul, _shl, _pow,
    _mod"""

    def _wrap(self, node):
        self.generic_visit(node)
        return ast.copy_location(ast.Call(func=ast.Name('_chk', ast.Load()), args=[node], keywords=[]), node)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, (ast.Mult, ast.LShift, ast.Pow, ast.Mod)):
            fn = {ast.Mult: '_mul', ast.LShift: '_shl', ast.Pow: '_pow', ast.Mod: '_mod'}[type(node.op)]
            node = ast.copy_location(ast.Call(func=ast.Name(fn, ast.Load()), args=[node.left, node.right],
                                              keywords=[]), node)
        return ast.copy_location(ast.Call(func=ast.Name('_chk', ast.Load()), args=[node], keywords=[]), node)

    visit_UnaryOp = _wrap
    visit_Call = _wrap


def py_eval(src):
    try:
        tree = ast.parse(src, mode='eval')
    except SyntaxError:
        return 'ERR SyntaxError', None
    tree = ast.fix_missing_locations(Checked().visit(tree))
    env = dict(VARS)
    env['L'], env['E'], env['F'], env['M'] = [1, 2, 3], [], [1.5, -2, True, 'x'], [[1, 2], [3]]
    env['_chk'] = _chk
    env['_mul'] = _mul
    env['_shl'] = _shl
    env['_pow'] = _pow
    env['_mod'] = _mod
    env['__builtins__'] = BUILTINS
    try:
        v = eval(compile(tree, '<expr>', 'eval'), env)
    except Exception as e:  # noqa: BLE001 - the class is the result
        return 'ERR ' + type(e).__name__, None
    if isinstance(v, range):
        v = list(v)  # mptune materializes range() as a list
    try:
        return 'OK ' + repr(v), v
    except Exception as e:  # noqa: BLE001
        return 'ERR ' + type(e).__name__, None


class Gen:
    def __init__(self, rng):
        self.r = rng
        self.depth = 0

    def pick(self, *opts):
        return self.r.choice(opts)

    def par(self, s):
        # parentheses are usually kept; sometimes dropped to exercise precedence (both sides parse
        # the same text, so any parse is compared as it is)
        return s if self.r.random() < 0.25 else '(' + s + ')'

    def small_int(self):
        return str(self.r.choice([0, 1, 2, 3, 4, 5, 7, 8, 10, 16, 32, 100, 1024]))

    def int_lit(self):
        r = self.r.random()
        if r < 0.6:
            return self.small_int()
        if r < 0.75:
            return '-' + self.small_int()
        if r < 0.85:
            return str(self.r.choice([2**31, 2**32 + 1, 10**9, 3037000499, 2**53 + 1, 2**62, INT64_MAX]))
        return self.r.choice(['True', 'False', '0', '1'])

    def float_lit(self):
        return self.r.choice(['2.5', '0.1', '0.5', '1.0', '0.0', '3.75', '1e16', '1e-05', '1.5e300', '2.0',
                              '7.0', '1e22', '0.3', '123.456', "float('inf')", "float('nan')", '-0.0',
                              '1_000.5', '.5', '5.'])

    def leaf(self, kind):
        if kind == 'int':
            return self.r.choice([self.int_lit(), self.int_lit(), 'a', 'b', 'z', 't'])
        if kind == 'float':
            return self.r.choice([self.float_lit(), 'f', 'g'])
        if kind == 'str':
            return self.r.choice(["'ab'", '"x"', "''", 's', "'a'", "'ba'", "'it\\'s'"])
        if kind == 'list':
            return self.r.choice(['L', 'E', 'F', 'M', '[1, 2]', '[]', "['a', 'b']", '[0.5, 2]', '[3, 1, 2]'])
        return self.leaf(self.r.choice(['int', 'int', 'float', 'bool']))

    def gen(self, kind, d):
        if d <= 0 or self.r.random() < 0.2:
            if kind == 'bool':
                return self.r.choice(['True', 'False', 't', self.leaf('int') + ' < ' + self.leaf('int')])
            if kind == 'any':
                kind = self.r.choice(['int', 'int', 'float', 'str', 'list'])
            return self.leaf(kind)
        m = getattr(self, 'g_' + kind)
        return m(d - 1)

    def num(self, d):
        return self.gen(self.r.choice(['int', 'int', 'float']), d)

    def g_any(self, d):
        return self.gen(self.r.choice(['int', 'int', 'float', 'bool', 'str', 'list']), d)

    def g_int(self, d):
        r = self.r.randrange(20)
        op = self.r.choice(['+', '-', '*', '//', '%', '+', '-', '*'])
        if r < 7:
            return self.par(self.gen('int', d)) + ' ' + op + ' ' + self.par(self.gen('int', d))
        if r == 7:
            return self.par(self.gen('int', d)) + ' ** ' + self.r.choice(['0', '1', '2', '3', '5', 'a', 'z', 't', '-1', '-2', 'b'])
        if r == 8:
            return self.r.choice(['-', '+', '~', '- -']) + self.par(self.gen('int', d))
        if r == 9:
            return self.r.choice(['abs', 'int', 'round', 'len', 'bool', 'int']) + '(' + self.gen(self.r.choice(['int', 'float', 'list', 'str']), d) + ')'
        if r == 10:
            return self.r.choice(['min', 'max']) + '(' + ', '.join(self.gen('int', d) for _ in range(self.r.randint(1, 3))) + ')'
        if r == 11:
            return self.r.choice(['min', 'max', 'sum', 'len']) + '(' + self.gen('list', d) + ')'
        if r == 12:
            return self.par(self.gen('list', d)) + '[' + self.gen('int', d) + ']'
        if r == 13:
            return self.gen('int', d) + ' if ' + self.gen('bool', d) + ' else ' + self.gen('int', d)
        if r == 14:
            return self.par(self.gen('int', d)) + ' ' + self.r.choice(['&', '|', '^', '<<', '>>']) + ' ' + self.r.choice([self.par(self.gen('int', d)), self.small_int()])
        if r == 15:
            return 'round(' + self.gen('float', d) + ', ' + self.r.choice(['0', '1', '2', '-1', '-2', '3']) + ')'
        if r == 16:
            return 'int(' + self.r.choice(["'42'", "' -7 '", "'1_000'", "'2.5'", "'x'", "'+3'", "'9223372036854775808'"]) + ')'
        if r == 17:  # (no `*`: int * str/list with a large int would build a huge sequence)
            return self.par(self.gen('int', d)) + ' ' + self.r.choice(['+', '-', '//', '%']) + ' ' + self.par(self.gen('any', d))
        return self.gen('bool', d)

    def g_float(self, d):
        r = self.r.randrange(12)
        op = self.r.choice(['+', '-', '*', '/', '//', '%'])
        if r < 5:
            return self.par(self.num(d)) + ' ' + op + ' ' + self.par(self.num(d))
        if r == 5:
            return self.par(self.num(d)) + ' / ' + self.par(self.gen('int', d))
        if r == 6:
            return self.par(self.num(d)) + ' ** ' + self.r.choice(['0.5', '2', '-1', '3', '0.0', '-0.5', '2.5', 'f', 'g', '400', '-400'])
        if r == 7:
            return self.r.choice(['-', '+']) + self.par(self.gen('float', d))
        if r == 8:
            return self.r.choice(['float', 'abs']) + '(' + self.num(d) + ')'
        if r == 9:
            return "float(" + self.r.choice(["'1.5'", "' -2e3 '", "'inf'", "'-nan'", "'1_0.5'", "'abc'", "'0x10'", "'.5'"]) + ')'
        if r == 10:
            return 'round(' + self.gen('float', d) + ', ' + self.r.choice(['1', '2', '-1', '0']) + ')'
        return self.gen('float', d) + ' if ' + self.gen('bool', d) + ' else ' + self.num(d)

    def cmp_op(self):
        return self.r.choice(['<', '<=', '>', '>=', '==', '!='])

    def g_bool(self, d):
        r = self.r.randrange(12)
        if r < 3:
            return self.par(self.num(d)) + ' ' + self.cmp_op() + ' ' + self.par(self.num(d))
        if r == 3:
            parts = [self.par(self.num(d)) for _ in range(self.r.randint(3, 4))]
            out = parts[0]
            for p in parts[1:]:
                out += ' ' + self.cmp_op() + ' ' + p
            return out
        if r == 4:
            return self.par(self.gen('any', d)) + ' ' + self.cmp_op() + ' ' + self.par(self.gen('any', d))
        if r == 5:
            return self.par(self.gen('any', d)) + ' ' + self.r.choice(['in', 'not in']) + ' ' + self.par(self.gen(self.r.choice(['list', 'list', 'str']), d))
        if r == 6:
            return 'not ' + self.par(self.gen('bool', d))
        if r in (7, 8):
            return self.par(self.gen(self.r.choice(['bool', 'int', 'any']), d)) + ' ' + self.r.choice(['and', 'or']) + ' ' + self.par(self.gen(self.r.choice(['bool', 'int', 'any']), d))
        if r == 9:
            return 'bool(' + self.gen('any', d) + ')'
        if r == 10:
            # always parenthesized: mptune accepts range() only where it behaves as a list would
            return '(' + self.gen('int', d) + ' ' + self.r.choice(['in', 'not in']) + ' range(' + self.r.choice(
                ['5', '-3, 4', '10, 0, -2', 'a', 'b, a', '10**5', '-10**5, 10**5, 7', 'z, 9, t', '1, 10, 0']) + '))'
        return self.par(self.gen('list', d)) + ' ' + self.cmp_op() + ' ' + self.par(self.gen('list', d))

    def g_str(self, d):
        r = self.r.randrange(6)
        if r == 0:
            return self.par(self.gen('str', d)) + ' + ' + self.par(self.gen('str', d))
        if r == 1:
            return self.par(self.gen('str', d)) + ' * ' + self.r.choice(['2', '0', '-1', 'a', 't', 'b'])
        if r == 2:
            return 'str(' + self.gen(self.r.choice(['int', 'float', 'list', 'bool']), d) + ')'
        if r == 3:
            return self.par(self.gen('str', d)) + '[' + self.r.choice(['0', '-1', '1', '2', 'b', 'z']) + ']'
        if r == 4:
            return self.r.choice(['min', 'max']) + '(' + self.gen('str', d) + ')'
        return self.gen('str', d) + ' if ' + self.gen('bool', d) + ' else ' + self.gen('str', d)

    def comp(self, d):
        var = self.r.choice(['x', 'i', 'a'])  # 'a' shadows the variable a
        it = self.r.choice(['range(' + self.r.choice(['5', '1, 7', '10, 0, -3', '-2, 3', 'a', '0']) + ')',
                            'L', 'F', 'E', 's', '[2, -1, 0]', 'M'])
        body = self.r.choice([var, var + ' * 2', var + ' ** 2', '-' + var, var + ' // 2', var + ' + a',
                              str(var) + ' % 3', '[' + var + ']', var + ' * ' + self.gen('num' if False else 'int', d),
                              var + ' if ' + var + ' else 0'])
        s = '[' + body + ' for ' + var + ' in ' + it
        for _ in range(self.r.choice([0, 0, 1, 1, 2])):
            s += ' if ' + self.r.choice([var, var + ' % 2', var + ' > 0', 'not ' + var, var + ' != 1', var + " == 'a'"])
        return s + ']'

    def g_list(self, d):
        r = self.r.randrange(9)
        if r == 0:
            return '[' + ', '.join(self.gen('any', d) for _ in range(self.r.randint(0, 3))) + ']'
        if r == 1:
            return self.par(self.gen('list', d)) + ' + ' + self.par(self.gen('list', d))
        if r == 2:
            return self.par(self.gen('list', d)) + ' * ' + self.r.choice(['2', '0', '-1', 'a', 't', 'b', '3'])
        if r == 3:
            return 'list(range(' + self.r.choice(['5', '2, 9', '9, 2, -2', '0', '-3', 'a, 10, a', 'b, a', '1, 10, 0']) + '))'
        if r in (4, 5):
            return self.comp(d)
        if r == 6:
            return 'list(' + self.gen(self.r.choice(['list', 'str']), d) + ')'
        if r == 7:
            return 'M[' + self.r.choice(['0', '1', '-1', '2']) + ']'
        return self.gen('list', d) + ' if ' + self.gen('bool', d) + ' else ' + self.gen('list', d)


class NumGen(Gen):
    """numeric expressions over the int/bool variables only: what constraints look like, and what the
    numeric fast path (spaces/expr/fast.c) compiles; includes overflow and zero divisors"""

    def leaf(self, kind):
        r = self.r.random()
        if r < 0.45:
            return self.r.choice(['a', 'b', 'z', 't', 'n', 'B', 'a', 'b', 'n'])
        if r < 0.85:
            return self.r.choice(['0', '1', '2', '3', '7', '32', '1024', '49152', 'True', 'False', '-1', '-3'])
        return self.r.choice(['2.5', '0.5', '-1.5', '0.0', '1e300', '3.0', '0.1'])

    def gen(self, kind, d):
        if d <= 0 or self.r.random() < 0.15:
            return self.leaf(kind)
        r = self.r.randrange(16)
        if r < 6:
            return self.par(self.gen(kind, d - 1)) + ' ' + self.r.choice(
                ['+', '-', '*', '//', '%', '*', '+', '/', '&', '|', '^', '>>', '<<']) + ' ' + self.par(self.gen(kind, d - 1))
        if r == 6:
            return self.par(self.gen(kind, d - 1)) + ' ** ' + self.r.choice(['0', '1', '2', '3', '-1', '-2', '0.5', 'True'])
        if r == 7:
            return self.r.choice(['-', '+', '~', 'not ']) + self.par(self.gen(kind, d - 1))
        if r in (8, 9, 10):
            parts = [self.par(self.gen(kind, d - 1)) for _ in range(self.r.choice([2, 2, 2, 3]))]
            out = parts[0]
            for p in parts[1:]:
                out += ' ' + self.cmp_op() + ' ' + p
            return out
        if r in (11, 12):
            return self.par(self.gen(kind, d - 1)) + ' ' + self.r.choice(['and', 'or']) + ' ' + self.par(self.gen(kind, d - 1))
        if r == 13:
            return self.par(self.gen(kind, d - 1)) + ' if ' + self.par(self.gen(kind, d - 1)) + ' else ' + self.par(self.gen(kind, d - 1))
        if r == 14:
            return self.par(self.gen(kind, d - 1)) + ' ' + self.r.choice(['in', 'not in']) + ' ' + self.r.choice(
                ['[1, 2, 4]', '[0, 2.0, -3]', '[True]', '[]', "[1, 'a']"])
        return self.par(self.gen(kind, d - 1)) + ' ' + self.cmp_op() + ' ' + self.par(self.gen(kind, d - 1)) + ' ' + self.cmp_op() + ' ' + self.par(self.gen(kind, d - 1))


FIXED = [
    # documented cases and syntax errors (both sides must agree)
    '-7 // 2', '-7 % 2', '7.5 // 2', '-2**2', '2**-1', '0.0 ** -1', '0 ** -1', '1/0', '1 == 1.0', 'True + 1',
    '0 or 5', 'round(2.5)', 'round(0.5)', 'round(-0.5)', 'round(2.675, 2)', '1e16', '1e-05', '0.1', '-0.0',
    "float('inf')", "float('nan')", '1 +', '(1', '[1,,2]', 'a b', '1 < < 2', 'not', '[x for x in]', 'a if b',
    'L[', "'abc", 'max(x for x in L)', 'sum(x*x for x in range(4))', '1 if 2 else 3 if 4 else 5',
    '[1, 2][-1]', 'a < b < f', 'not a < b', '- - - a', '2 ** 3 ** 2', '(-2) ** 63', '-(2 ** 62) * 2',
    '2 ** 63', '9223372036854775807 + 1', '-9223372036854775807 - 2', '3037000500 * 3037000500',
    'abs(-9223372036854775807 - 1)', '(-9223372036854775807 - 1) // -1', '(-9223372036854775807 - 1) % -1',
    '1 << 62', '1 << 63', '-1 << 63', '5 >> 100', '-5 >> 100', '9007199254740993 / 3', '2**62 / 3',
    '1e308 * 10', '-1e308 * 10', '1e308 * 10 - 1e308 * 10', '10.0 ** 400', '(-8) ** (1/3)', '(-8.0) ** 3',
    'round(1e300)', 'int(1e19)', 'int(-1e18)', 'round(123.456, -1)', 'round(-0.0)', 'round(0.5, 0)',
    'round(-2.5, 0)', 'round(5e-324, 400)', 'round(1.5e300, -300)', 'round(1.7e308, -308)', "int('-0')",
    "[c for c in 'hello' if c != 'l']", "'ell' in 'hello'", "'' in 'abc'", '[] in [[]]', "[1, [2]] == [1, [2.0]]",
    "max([[1, 2], [1, 3]])", "min('b', 'a', 'c')", 'len(range(10**15))', 'len(range(-5, 10**18, 3))',
    '[x for x in range(10**12) if x < 3][-1]' if False else 'sum([x for x in range(-10, 10, 3)])',
    '2.0 in range(5)', '2.5 in range(5)', "'a' in range(5)", '10**13 in range(0, 10**14, 10**13)',
    'range(5)[-2]', 'max(range(3, 9, 2))', 'list(range(5)) == [0, 1, 2, 3, 4]', 'range(3)', '[range(3)][0]' if False else '1', 'sorted', 'x', 'foo(1)',
    "'ab' * 134217729", '[0] * 16777217', '[0, 1] * 8388609', 'round(5 * 10**18, -19)',
    'round(5 * 10**18 + 1, -19)', 'round(-6 * 10**18, -19)', 'round(9 * 10**18, -20)', 'round(-15, -1)',
    'round(25, -1)', 'round(-25, -1)', 'round(35, -1)', 'round(9223372036854775807, -1)',
    'round(-9223372036854775807 - 1, -18)', 'round(2.5, None)' if False else 'round(0.5)',
]


EDGE_VALUES = ['0', '1', '-1', '2', '-3', '7', '9223372036854775807', '(-9223372036854775807 - 1)', '2**62',
               '3037000499', '0.0', '-0.0', '0.5', '-2.5', '1e308', "float('inf')", "float('-inf')", "float('nan')",
               '2.0**53', 'True', 'False', "'ab'", "''", '[1]', '[]', '[0.5, True]']
EDGE_BINOPS = ['+', '-', '*', '/', '//', '%', '**', '&', '|', '^', '<<', '>>', '<', '<=', '==', '!=', '>', '>=',
               'in', 'not in', 'and', 'or']
EDGE_CALLS = ['abs', 'int', 'float', 'round', 'bool', 'str', 'len', 'list', 'min', 'max', 'sum', '-', '+', '~', 'not ']


def edge_table():
    """every operator on every pair of edge values, every builtin on every edge value (string `%`
    formatting is left out: mptune does not implement it)"""
    out = []
    for x in EDGE_VALUES:
        for y in EDGE_VALUES:
            for op in EDGE_BINOPS:
                if op == '%' and x.startswith("'"):
                    continue
                out.append('%s %s %s' % (x, op, y))
        for f in EDGE_CALLS:
            out.append(f + ('(%s)' % x if f[-1].isalpha() else x if f[-1] == ' ' else '(%s)' % x))
        for nd in ('0', '1', '-1', '-19', '400', '-400'):
            out.append('round(%s, %s)' % (x, nd))
        out += ['max(%s, %s)' % (x, y) for y in EDGE_VALUES] + ['min(%s, %s)' % (x, y) for y in EDGE_VALUES]
        out += ['[10, 20, 30][%s]' % x, "'abc'[%s]" % x, 'len(range(%s))' % x, '%s in range(-2, 5)' % x,
                'range(10, -10, -3)[%s]' % x, 'len(range(-5, %s, 3))' % x, '[%s][0]' % x, '[%s] * 2' % x,
                '%s if %s else 0' % (x, x), '[v for v in [%s] if v]' % x]
    return out


def main():
    driver = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 10500
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 20261121
    rng = random.Random(seed)
    g = Gen(rng)
    exprs = list(FIXED) + edge_table()
    seen = set(exprs)
    # true division of large ints (correct rounding beyond 2^53)
    for _ in range(3000):
        x = rng.choice([rng.randrange(-2**63, 2**63), rng.randrange(-2**56, 2**56), rng.randrange(-2**40, 2**40)])
        y = rng.choice([rng.randrange(-2**63, 2**63), rng.randrange(-2**56, 2**56), rng.randrange(1, 2**30)]) or 1
        exprs.append('%d / %d' % (x, y) if x != -2**63 else '(%d - 1) / %d' % (x + 1, y))
    base = len(exprs)  # then n generated expressions: a third numeric (NumGen), the rest of every kind
    ng = NumGen(rng)
    while len(exprs) < base + n // 3:
        e = ng.gen('int', rng.randint(1, 5))
        if e not in seen:
            seen.add(e)
            exprs.append(e)
    while len(exprs) < base + n:
        e = g.gen(rng.choice(['int', 'int', 'float', 'bool', 'bool', 'list', 'str', 'any']), rng.randint(1, 4))
        if e not in seen and '\n' not in e:
            seen.add(e)
            exprs.append(e)
    inp = '\n'.join(exprs) + '\n'
    # float formatting: repr of every power of two and of random doubles (all bit patterns)
    vals = [math.ldexp(1.0, e) for e in range(-1074, 1024)]
    while len(vals) < 60000:
        v = struct.unpack('<d', struct.pack('<Q', rng.getrandbits(64)))[0]
        if math.isfinite(v):
            vals.append(v)
    vals += [rng.uniform(-1e4, 1e4) for _ in range(10000)] + [round(rng.uniform(0, 100), rng.randint(0, 6)) for _ in range(10000)]
    vals += [0.0, -0.0, math.inf, -math.inf, math.nan]
    out = subprocess.run([driver, '--float-repr'], input='\n'.join(v.hex() for v in vals) + '\n',
                         capture_output=True, text=True, timeout=600)
    reprs = out.stdout.split('\n')[:-1]
    bad = [(v.hex(), repr(v), r) for v, r in zip(vals, reprs) if repr(v) != r]
    if out.returncode != 0 or len(reprs) != len(vals) or bad:
        print('expr_diff: float repr differs from Python for %d of %d values: %s' % (len(bad), len(vals), bad[:10]))
        return 1
    print('expr_diff: float repr identical to Python for %d doubles' % len(vals))

    runs = {}
    for mode in ('', '--bool', '--slow', '--slow --bool'):
        out = subprocess.run([driver] + mode.split(), input=inp, capture_output=True, text=True, timeout=600)
        if not mode:
            print(out.stderr.strip())
        if out.returncode != 0:
            print('driver %s failed (%d): %s' % (mode, out.returncode, out.stderr[-2000:]))
            return 1
        runs[mode] = out.stdout.split('\n')[:-1]
        if len(runs[mode]) != len(exprs):
            print('driver %s printed %d lines for %d expressions' % (mode, len(runs[mode]), len(exprs)))
            return 1
    mismatches = []
    stats = {}
    for k, e in enumerate(exprs):
        c, cb = runs[''][k], runs['--bool'][k]
        if runs['--slow'][k] != c or runs['--slow --bool'][k] != cb:
            mismatches.append((e + '   [fast vs general path]', c + ' / ' + cb,
                               runs['--slow'][k] + ' / ' + runs['--slow --bool'][k]))
            continue
        expect, v = py_eval(e)
        key = expect.split(' ', 1)[0] if expect.startswith('OK') else expect
        stats[key] = stats.get(key, 0) + 1
        if c != expect:
            # nan prints the same in both; anything else must be identical
            mismatches.append((e, expect, c))
            continue
        expb = expect if expect.startswith('ERR') else 'OK ' + repr(bool(v))
        if cb != expb:
            mismatches.append((e + '   [--bool]', expb, cb))
    print('expr_diff: %d expressions (seed %d), outcomes: %s' % (
        len(exprs), seed, ', '.join('%s %d' % kv for kv in sorted(stats.items(), key=lambda kv: -kv[1]))))
    for e, exp, c in mismatches[:40]:
        print('MISMATCH: %s\n   python: %s\n   mptune: %s' % (e, exp, c))
    if mismatches:
        print('expr_diff: %d mismatches' % len(mismatches))
        return 1
    print('expr_diff: all identical')
    return 0


if __name__ == '__main__':
    sys.exit(main())
