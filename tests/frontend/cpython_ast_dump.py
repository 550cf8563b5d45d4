"""Render CPython's own AST in the S-expression form of frontend/ast_printer.h.

The parser tests parse the same files with Kiln (tests/frontend/tools/dump_ast)
and with CPython's `ast` module, print both with the same rules and compare
them line by line. Constructs that kernels cannot contain (lambdas,
comprehensions, classes, try, with, ...) are rendered as minimally as Kiln
keeps them.

Usage: python cpython_ast_dump.py FILE...
"""

import ast
import sys

_BINOPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.MatMult: "@", ast.Div: "/",
    ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**", ast.LShift: "<<",
    ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&",
}
_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~", ast.Not: "not"}
_CMP = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
    ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
    ast.NotIn: "not in",
}


def quoted(data):
    out = ['"']
    for byte in data:
        if 0x20 <= byte < 0x7F and byte not in (0x22, 0x5C):
            out.append(chr(byte))
        else:
            out.append("\\x%02x" % byte)
    out.append('"')
    return "".join(out)


def opt(node):
    return "_" if node is None else expr(node)


def exprs(nodes):
    return "".join(" " + opt(n) for n in nodes)


def constant(value):
    if value is None or value is True or value is False:
        return repr(value)
    if value is Ellipsis:
        return "..."
    if isinstance(value, int):
        return str(value) if value < 2**64 else "(BigInt)"
    if isinstance(value, float):
        return "%.17g" % value
    if isinstance(value, complex):
        return "%.17gj" % value.imag
    if isinstance(value, bytes):
        return "b" + quoted(value)
    return quoted(value.encode("utf-8", "surrogatepass"))


def expr(node):
    kind = type(node)
    if kind is ast.Name:
        return node.id
    if kind is ast.Constant:
        return constant(node.value)
    if kind is ast.JoinedStr:
        return "(FString)"
    if kind in (ast.Tuple, ast.List, ast.Set):
        return "(%s%s)" % (kind.__name__, exprs(node.elts))
    if kind is ast.Dict:
        parts = []
        for key, value in zip(node.keys, node.values):
            parts.append(" " + ("**" if key is None else expr(key)) + " " + expr(value))
        return "(Dict%s)" % "".join(parts)
    if kind is ast.Attribute:
        return "(Attr %s %s)" % (expr(node.value), node.attr)
    if kind is ast.Subscript:
        return "(Sub %s %s)" % (expr(node.value), expr(node.slice))
    if kind is ast.Slice:
        return "(Slice %s %s %s)" % (opt(node.lower), opt(node.upper), opt(node.step))
    if kind is ast.Call:
        keywords = "".join(" %s=%s" % (k.arg or "**", expr(k.value)) for k in node.keywords)
        return "(Call %s%s%s)" % (expr(node.func), exprs(node.args), keywords)
    if kind is ast.UnaryOp:
        return "(%s %s)" % (_UNARY[type(node.op)], expr(node.operand))
    if kind is ast.BinOp:
        return "(%s %s %s)" % (_BINOPS[type(node.op)], expr(node.left), expr(node.right))
    if kind is ast.BoolOp:
        return "(%s%s)" % ("and" if isinstance(node.op, ast.And) else "or", exprs(node.values))
    if kind is ast.Compare:
        rest = "".join(" %s %s" % (_CMP[type(op)], expr(c))
                       for op, c in zip(node.ops, node.comparators))
        return "(Compare %s%s)" % (expr(node.left), rest)
    if kind is ast.IfExp:
        return "(IfExp %s %s %s)" % (expr(node.test), expr(node.body), expr(node.orelse))
    if kind is ast.NamedExpr:
        return "(:= %s %s)" % (expr(node.target), expr(node.value))
    if kind is ast.Starred:
        return "(Starred %s)" % expr(node.value)
    if kind is ast.Lambda:
        return "(Lambda %s)" % expr(node.body)
    if kind is ast.ListComp:
        return "(ListComp %s)" % expr(node.elt)
    if kind is ast.SetComp:
        return "(SetComp %s)" % expr(node.elt)
    if kind is ast.DictComp:
        return "(DictComp %s)" % expr(node.value)
    if kind is ast.GeneratorExp:
        return "(GenExp %s)" % expr(node.elt)
    if kind in (ast.Yield, ast.YieldFrom):
        return "(Yield %s)" % opt(node.value)
    if kind is ast.Await:
        return "(Await %s)" % expr(node.value)
    raise NotImplementedError(kind.__name__)


def params(args):
    out = []
    positional = args.posonlyargs + args.args
    defaults = [None] * (len(positional) - len(args.defaults)) + args.defaults
    for arg, default in zip(positional, defaults):
        out.append(arg.arg + ("" if default is None else "=" + expr(default)))
    if args.vararg:
        out.append("*" + args.vararg.arg)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults):
        out.append(arg.arg + ("" if default is None else "=" + expr(default)))
    if args.kwarg:
        out.append("**" + args.kwarg.arg)
    return "".join(" " + p for p in out)


def aliases(names):
    return "".join(" %s%s" % (a.name, " as " + a.asname if a.asname else "") for a in names)


def stmts(nodes, indent, out):
    for node in nodes:
        stmt(node, indent, out)


def block(header, bodies, indent, out):
    pad = "  " * indent
    out.append(pad + header)
    for i, body in enumerate(bodies):
        if i:
            out.append(pad + "else")
        stmts(body, indent + 1, out)
    out.append(pad + ")")


def stmt(node, indent, out):
    pad = "  " * indent
    kind = type(node)
    if kind in (ast.FunctionDef, ast.AsyncFunctionDef):
        head = "(async def " if kind is ast.AsyncFunctionDef else "(def "
        decorators = "".join(" @" + expr(d) for d in node.decorator_list)
        block("%s%s (params%s)%s" % (head, node.name, params(node.args), decorators),
              [node.body], indent, out)
    elif kind is ast.ClassDef:
        block("(class %s" % node.name, [node.body], indent, out)
    elif kind is ast.Return:
        out.append(pad + "(return %s)" % opt(node.value))
    elif kind is ast.Assign:
        out.append(pad + "(=%s %s)" % (exprs(node.targets), expr(node.value)))
    elif kind is ast.AugAssign:
        out.append(pad + "(%s= %s %s)" % (_BINOPS[type(node.op)], expr(node.target),
                                          expr(node.value)))
    elif kind is ast.AnnAssign:
        out.append(pad + "(: %s %s %s)" % (expr(node.target), expr(node.annotation),
                                            opt(node.value)))
    elif kind in (ast.For, ast.AsyncFor):
        head = "(async for " if kind is ast.AsyncFor else "(for "
        bodies = [node.body] + ([node.orelse] if node.orelse else [])
        block("%s%s %s" % (head, expr(node.target), expr(node.iter)), bodies, indent, out)
    elif kind is ast.While:
        bodies = [node.body] + ([node.orelse] if node.orelse else [])
        block("(while %s" % expr(node.test), bodies, indent, out)
    elif kind is ast.If:
        bodies = [node.body] + ([node.orelse] if node.orelse else [])
        block("(if %s" % expr(node.test), bodies, indent, out)
    elif kind in (ast.With, ast.AsyncWith):
        block("(with", [node.body], indent, out)
    elif kind in (ast.Try, getattr(ast, "TryStar", ast.Try)):
        flat = list(node.body)
        for handler in node.handlers:
            flat += handler.body
        flat += node.orelse + node.finalbody
        block("(try", [flat], indent, out)
    elif kind is ast.Global:
        block("(global", [[]], indent, out)
    elif kind is ast.Nonlocal:
        block("(nonlocal", [[]], indent, out)
    elif kind is ast.Raise:
        out.append(pad + "(raise %s %s)" % (opt(node.exc), opt(node.cause)))
    elif kind is ast.Assert:
        out.append(pad + "(assert %s %s)" % (expr(node.test), opt(node.msg)))
    elif kind is ast.Import:
        out.append(pad + "(import%s)" % aliases(node.names))
    elif kind is ast.ImportFrom:
        star = " *" if len(node.names) == 1 and node.names[0].name == "*" else ""
        names = "" if star else aliases(node.names)
        out.append(pad + "(from %s%s import%s%s)" % ("." * node.level, node.module or "",
                                                     star, names))
    elif kind is ast.Delete:
        out.append(pad + "(del%s)" % exprs(node.targets))
    elif kind is ast.Pass:
        out.append(pad + "(pass)")
    elif kind is ast.Break:
        out.append(pad + "(break)")
    elif kind is ast.Continue:
        out.append(pad + "(continue)")
    elif kind is ast.Expr:
        out.append(pad + "(expr %s)" % expr(node.value))
    else:
        raise NotImplementedError(kind.__name__)


def dump(path):
    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    out = []
    stmts(tree.body, 0, out)
    return "\n".join(out) + ("\n" if out else "")


if __name__ == "__main__":
    for path in sys.argv[1:]:
        sys.stdout.write("== %s\n" % path)
        sys.stdout.write(dump(path))
