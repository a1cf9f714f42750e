#!/usr/bin/env python3
"""xdrgen: compiles an XDR (RFC 4506) specification into C++20 codecs.

    xdrgen.py SPEC.x OUT_DIR NAMESPACE

writes OUT_DIR/<stem>.h and OUT_DIR/<stem>.cpp. Mapping:

    int / unsigned int / hyper / unsigned hyper / bool -> int32_t / uint32_t / int64_t / uint64_t / bool
    const                   -> inline constexpr uint32_t, or uint64_t/int64_t/int32_t when the
                               value needs it (RFC 5662's NFS4_UINT64_MAX)
    enum                    -> unscoped enum : int32_t (RFC constants keep their names)
    struct                  -> struct
    union switch (d)        -> a tagged union: the discriminant plus exactly one live arm
                               (a C++ union of the data arms and the index of the live
                               one, 0 for void arms and for values no arm takes; special
                               members out of line, so that includers do not pay for
                               them). d() reads the discriminant; set_d(x) sets it
                               and, when x selects another arm, makes that arm live,
                               value-initialized; arm() returns the live arm and throws
                               std::bad_variant_access when the discriminant selects
                               another. Default-constructed: discriminant 0 and its arm.
    opaque x[N]             -> std::array<uint8_t, N>
    opaque x<N>, string x<N>-> std::span<const uint8_t> / std::string_view: views into the
                               decode buffer (borrowed, never copied)
    T x[N] / T x<N>         -> std::array<T, N> / std::vector<T>
    T *x                    -> std::optional<T>; but when T is a list node (a struct with a
                               `T *next` field) the field becomes std::vector<T>, the node
                               loses its `next` member, and the list is coded iteratively.
    program blocks          -> constexpr program, version and procedure numbers, and
                               proc_codecs(): a table of every procedure's argument and
                               result codecs (decode, then re-encode)

Each type gets  void xdr_encode(xdr::Encoder&, const T&)  and  bool xdr_decode(xdr::Decoder&, T&).
A struct whose wire form always has the same size (only scalars, enums, fixed opaques and
arrays, and such structs) also gets  void xdr_store(uint8_t* p, const T&), which writes it
at p; its xdr_encode takes that space at once (Encoder::extend) and stores into it.
Enums are closed (RFC 4506 §4.3): decoding a value the declaration does not list fails.

    xdrgen.py SPEC.x OUT_DIR NAMESPACE --skip ROOT[,ROOT...]

also gives each struct and union ROOT holds (itself included, through every field and arm)
    bool xdr_skip(xdr::Decoder&, std::type_identity<T>)
which reads past one T and accepts exactly what xdr_decode accepts, storing nothing (no
allocation): for finding where each item of a sequence ends before decoding any (the
operations of an NFSv4 COMPOUND).
"""
import os
import re
import sys

TOKEN = re.compile(r"\s*(?:(/\*.*?\*/)|(//[^\n]*)|(^%[^\n]*)|(0x[0-9a-fA-F]+|-?\d+)|([A-Za-z_]\w*)|(.))",
                   re.S | re.M)
PRIM = {"int": "int32_t", "unsigned int": "uint32_t", "hyper": "int64_t",
        "unsigned hyper": "uint64_t", "bool": "bool", "unsigned": "uint32_t"}
PRIM_CODEC = {"int32_t": "i32", "uint32_t": "u32", "int64_t": "i64", "uint64_t": "u64", "bool": "bool"}


def tokenize(text):
    toks = []
    for m in TOKEN.finditer(text):
        if m.group(1) or m.group(2) or m.group(3):
            continue
        tok = m.group(4) or m.group(5) or m.group(6)
        if tok and not tok.isspace():
            toks.append(tok)
    return toks


class Decl:
    """One declaration: kind is one of plain, fixed, var, opt, void."""

    def __init__(self, type_, name, kind="plain", size=None):
        self.type, self.name, self.kind, self.size = type_, name, kind, size


class Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0
        self.consts, self.defs, self.programs = [], [], []

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def take(self, want=None):
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise SyntaxError(f"expected {want!r}, got {tok!r} near token {self.i}: "
                              f"{' '.join(self.t[max(0, self.i - 8):self.i + 4])}")
        self.i += 1
        return tok

    def parse(self):
        while self.peek() is not None:
            kw = self.take()
            if kw == "const":
                name = self.take()
                self.take("=")
                self.consts.append((name, self.take()))
                self.take(";")
            elif kw in ("struct", "enum", "union"):
                name = self.take()
                self.defs.append((kw, name, getattr(self, "body_" + kw)()))
                self.take(";")
            elif kw == "typedef":
                self.defs.append(("typedef", None, self.decl()))
                self.take(";")
            elif kw == "program":
                self.program()
            else:
                raise SyntaxError(f"unexpected {kw!r}")
        return self

    def type_spec(self):
        tok = self.take()
        if tok == "unsigned":
            if self.peek() in ("int", "hyper"):
                return PRIM["unsigned " + self.take()]
            return "uint32_t"
        if tok in ("struct", "enum", "union"):
            return self.take()
        return PRIM.get(tok, tok)

    def decl(self):
        if self.peek() == "void":
            self.take()
            return Decl(None, None, "void")
        if self.peek() in ("opaque", "string"):
            base = self.take()
            name = self.take()
            if self.peek() == "[":
                self.take()
                size = self.take()
                self.take("]")
                return Decl(base, name, "fixed", size)
            self.take("<")
            size = None if self.peek() == ">" else self.take()
            self.take(">")
            return Decl(base, name, "var", size)
        t = self.type_spec()
        if self.peek() == "*":
            self.take()
            return Decl(t, self.take(), "opt")
        name = self.take()
        if self.peek() == "[":
            self.take()
            size = self.take()
            self.take("]")
            return Decl(t, name, "fixed", size)
        if self.peek() == "<":
            self.take()
            size = None if self.peek() == ">" else self.take()
            self.take(">")
            return Decl(t, name, "var", size)
        return Decl(t, name)

    def body_struct(self):
        self.take("{")
        decls = []
        while self.peek() != "}":
            decls.append(self.decl())
            self.take(";")
        self.take("}")
        return decls

    def body_enum(self):
        self.take("{")
        items = []
        while self.peek() != "}":
            name = self.take()
            self.take("=")
            items.append((name, self.take()))
            if self.peek() == ",":
                self.take()
        self.take("}")
        return items

    def body_union(self):
        self.take("switch")
        self.take("(")
        disc = self.decl()
        self.take(")")
        self.take("{")
        arms, default = [], None
        while self.peek() != "}":
            if self.peek() == "default":
                self.take()
                self.take(":")
                default = self.decl()
                self.take(";")
                continue
            values = []
            while self.peek() == "case":
                self.take()
                values.append(self.take())
                self.take(":")
            arms.append((values, self.decl()))
            self.take(";")
        self.take("}")
        return disc, arms, default

    def program(self):
        prog = self.take()
        self.take("{")
        versions = []
        while self.peek() == "version":
            self.take()
            vname = self.take()
            self.take("{")
            procs = []
            while self.peek() != "}":
                res = self.type_spec()
                pname = self.take()
                self.take("(")
                arg = self.type_spec()
                self.take(")")
                self.take("=")
                procs.append((pname, self.take(), arg, res))
                self.take(";")
            self.take("}")
            self.take("=")
            versions.append((vname, self.take(), procs))
            self.take(";")
        self.take("}")
        self.take("=")
        self.programs.append((prog, self.take(), versions))
        self.take(";")


class Generator:
    def __init__(self, parser, ns, stem, skip_roots=()):
        self.p, self.ns, self.stem = parser, ns, stem
        self.skip_roots = list(skip_roots)
        self.aliases = {}    # typedef name -> Decl
        self.list_nodes = {}  # struct name -> name of its self-referential field
        self.enums = set()
        self.defined = {}    # struct/union name -> (kind, body)
        for kind, name, body in parser.defs:
            if kind == "typedef":
                self.aliases[body.name] = body
            elif kind == "enum":
                self.enums.add(name)
            else:
                self.defined[name] = (kind, body)
            if kind == "struct":
                for d in body:
                    if d.kind == "opt" and d.type == name:
                        self.list_nodes[name] = d.name
        # Numeric values of every constant and enumerator (for case labels, duplicate
        # enumerators and constant types).
        self.values = {"TRUE": 1, "FALSE": 0}
        for name, val in parser.consts:
            self.values[name] = self.eval(val)
        for kind, name, body in parser.defs:
            if kind == "enum":
                for n, v in body:
                    self.values[n] = self.eval(v)

    def eval(self, v):
        if v in self.values:
            return self.values[v]
        try:
            return int(v, 0)
        except ValueError:
            raise SyntaxError(f"unknown constant {v!r}")

    def user(self, t):
        return t in self.defined or t in self.aliases or t in self.enums

    def q(self, t):
        """A type name as members spell it: user types fully qualified, so that a member
        named like a type (rpc's `auth_stat auth_stat`) cannot change its meaning."""
        return f"::{self.ns}::{t}" if self.user(t) else t

    def resolve(self, d):
        """Follows typedefs of opaque/string/arrays so fields know their wire form."""
        seen = 0
        while d.kind == "plain" and d.type in self.aliases and seen < 16:
            a = self.aliases[d.type]
            if a.kind == "plain" and a.type in PRIM_CODEC:
                return Decl(a.type, d.name)
            if a.kind in ("fixed", "var", "opt") or a.type in ("opaque", "string"):
                return Decl(a.type, d.name, a.kind, a.size)
            if a.kind == "plain" and a.type in self.enums:
                return Decl(a.type, d.name)
            d = Decl(a.type, d.name)
            seen += 1
        return d

    def cxx_type(self, d):
        if d.type == "opaque":
            if d.kind == "fixed":
                return f"std::array<uint8_t, {d.size}>"
            return "std::span<const uint8_t>"
        if d.type == "string":
            return "std::string_view"
        t = self.q(d.type)
        if d.kind == "fixed":
            return f"std::array<{t}, {d.size}>"
        if d.kind == "var":
            return f"std::vector<{t}>"
        if d.kind == "opt":
            if d.type in self.list_nodes:
                return f"std::vector<{t}>"
            return f"std::optional<{t}>"
        return t

    def value(self, v):
        return {"TRUE": "true", "FALSE": "false"}.get(v, v)

    # -- encode / decode of one field ---------------------------------------------------
    def enc_field(self, d, expr, out, ind="    "):
        d = self.resolve(d)
        if d.kind == "void":
            return
        if d.type == "opaque" and d.kind == "fixed":
            out.append(f"{ind}e.put_fixed({expr}.data(), {expr}.size());")
        elif d.type == "opaque":
            out.append(f"{ind}e.put_opaque({expr});")
        elif d.type == "string":
            out.append(f"{ind}e.put_string({expr});")
        elif d.kind in ("fixed", "var"):
            if d.kind == "var":
                out.append(f"{ind}e.put_u32(static_cast<uint32_t>({expr}.size()));")
            out.append(f"{ind}for (const auto& x : {expr}) {{")
            self.enc_field(Decl(d.type, "x"), "x", out, ind + "    ")
            out.append(f"{ind}}}")
        elif d.kind == "opt":
            if d.type in self.list_nodes:
                out.append(f"{ind}for (const auto& x : {expr}) {{ e.put_bool(true); xdr_encode(e, x); }}")
                out.append(f"{ind}e.put_bool(false);")
            else:
                out.append(f"{ind}e.put_bool({expr}.has_value());")
                out.append(f"{ind}if ({expr}) xdr_encode(e, *{expr});")
        elif d.type in PRIM_CODEC:
            out.append(f"{ind}e.put_{PRIM_CODEC[d.type]}({expr});")
        elif d.type in self.enums:
            out.append(f"{ind}e.put_i32(static_cast<int32_t>({expr}));")
        else:
            out.append(f"{ind}xdr_encode(e, {expr});")

    # -- structs whose wire form has one size ---------------------------------------------
    def wire_size(self, d, depth=0):
        """The bytes d always takes on the wire (scalars, enums, fixed opaques, fixed
        arrays and structs of only those), or None when its size varies."""
        d = self.resolve(d)
        if depth > 16 or d.kind in ("void", "var", "opt") or d.type == "string":
            return None
        if d.type == "opaque":
            n = self.eval(d.size)
            return n + (-n % 4)
        if d.kind == "fixed":
            n = self.wire_size(Decl(d.type, "x"), depth + 1)
            return None if n is None else n * self.eval(d.size)
        if d.type in PRIM_CODEC:
            return 8 if PRIM_CODEC[d.type] in ("u64", "i64") else 4
        if d.type in self.enums:
            return 4
        kind, body = self.defined.get(d.type, (None, None))
        if kind != "struct" or d.type in self.list_nodes:
            return None
        total = 0
        for f in body:
            n = self.wire_size(f, depth + 1)
            if n is None:
                return None
            total += n
        return total

    def store_field(self, d, expr, at, out, ind="    ", depth=0):
        """Writes d's wire form at p + at (a C++ expression); d has a wire_size. `depth`
        names the loop variable of each nested fixed array (i0, i1, ...)."""
        d = self.resolve(d)
        if d.type == "opaque":
            n = self.eval(d.size)
            out.append(f"{ind}std::memcpy(p + {at}, {expr}.data(), {n});")
            if n % 4:
                out.append(f"{ind}std::memset(p + {at} + {n}, 0, {-n % 4});")
        elif d.kind == "fixed":
            step = self.wire_size(Decl(d.type, "x"))
            i = f"i{depth}"
            out.append(f"{ind}for (size_t {i} = 0; {i} < {expr}.size(); ++{i}) {{")
            self.store_field(Decl(d.type, "x"), f"{expr}[{i}]", f"{at} + {i} * {step}", out,
                             ind + "    ", depth + 1)
            out.append(f"{ind}}}")
        elif d.type in PRIM_CODEC and PRIM_CODEC[d.type] in ("u64", "i64"):
            out.append(f"{ind}xdr::store_u64(p + {at}, static_cast<uint64_t>({expr}));")
        elif d.type in PRIM_CODEC or d.type in self.enums:
            out.append(f"{ind}xdr::store_u32(p + {at}, static_cast<uint32_t>({expr}));")
        else:
            out.append(f"{ind}xdr_store(p + {at}, {expr});")

    def dec_field(self, d, expr, out, ind="    "):
        d = self.resolve(d)
        if d.kind == "void":
            return
        bound = d.size if d.size else "xdr::kUnbounded"
        if d.type == "opaque" and d.kind == "fixed":
            out.append(f"{ind}{{ auto s = dd.get_fixed({expr}.size()); "
                       f"if (!dd.ok()) return false; std::memcpy({expr}.data(), s.data(), s.size()); }}")
        elif d.type == "opaque":
            out.append(f"{ind}{expr} = dd.get_opaque({bound});")
        elif d.type == "string":
            out.append(f"{ind}{expr} = dd.get_string({bound});")
        elif d.kind == "fixed":
            out.append(f"{ind}for (auto& x : {expr}) {{")
            self.dec_field(Decl(d.type, "x"), "x", out, ind + "    ")
            out.append(f"{ind}}}")
        elif d.kind == "var":
            out.append(f"{ind}{{ uint32_t n = dd.get_u32();")
            out.append(f"{ind}  if (!dd.ok() || n > uint32_t({bound}) || n > dd.remaining() / 4) {{ dd.fail(); return false; }}")
            out.append(f"{ind}  {expr}.resize(n);")
            out.append(f"{ind}  for (auto& x : {expr}) {{")
            self.dec_field(Decl(d.type, "x"), "x", out, ind + "    ")
            out.append(f"{ind}  }} }}")
        elif d.kind == "opt":
            if d.type in self.list_nodes:
                out.append(f"{ind}{expr}.clear();")
                out.append(f"{ind}while (dd.get_bool()) {{ if (!xdr_decode(dd, {expr}.emplace_back())) return false; }}")
            else:
                out.append(f"{ind}if (dd.get_bool()) {{ if (!xdr_decode(dd, {expr}.emplace())) return false; }}")
                out.append(f"{ind}else {expr}.reset();")
        elif d.type in PRIM_CODEC:
            out.append(f"{ind}{expr} = dd.get_{PRIM_CODEC[d.type]}();")
        else:  # structs, unions and enums (whose decoder checks the value) have their own
            out.append(f"{ind}if (!xdr_decode(dd, {expr})) return false;")

    # -- skipping (see the file comment) -------------------------------------------------
    def skip_field(self, d, out, ind="    ", depth=0):
        """Reads past d, with the checks dec_field makes; `depth` names loop variables."""
        d = self.resolve(d)
        if d.kind == "void":
            return
        bound = d.size if d.size else "xdr::kUnbounded"
        i = f"i{depth}"
        if d.type == "opaque" and d.kind == "fixed":
            out.append(f"{ind}dd.get_fixed({self.eval(d.size)});")
        elif d.type == "opaque":
            out.append(f"{ind}dd.get_opaque({bound});")
        elif d.type == "string":
            out.append(f"{ind}dd.get_string({bound});")
        elif d.kind == "fixed":
            out.append(f"{ind}for (size_t {i} = 0; {i} < {self.eval(d.size)}; ++{i}) {{")
            self.skip_field(Decl(d.type, "x"), out, ind + "    ", depth + 1)
            out.append(f"{ind}}}")
        elif d.kind == "var":
            n = f"n{depth}"
            out.append(f"{ind}{{ uint32_t {n} = dd.get_u32();")
            out.append(f"{ind}  if (!dd.ok() || {n} > uint32_t({bound}) || {n} > dd.remaining() / 4) {{ dd.fail(); return false; }}")
            codec = PRIM_CODEC.get(self.resolve(Decl(d.type, "x")).type)
            if codec in ("u32", "i32", "u64", "i64"):  # words, nothing to check: at once
                out.append(f"{ind}  dd.get_fixed(size_t{{{n}}} * {8 if '64' in codec else 4}); }}")
                return
            out.append(f"{ind}  for (uint32_t {i} = 0; {i} < {n}; ++{i}) {{")
            self.skip_field(Decl(d.type, "x"), out, ind + "    ", depth + 1)
            out.append(f"{ind}  }} }}")
        elif d.kind == "opt":
            tag = f"std::type_identity<{self.q(d.type)}>{{}}"
            if d.type in self.list_nodes:
                out.append(f"{ind}while (dd.get_bool()) {{ if (!xdr_skip(dd, {tag})) return false; }}")
            else:
                out.append(f"{ind}if (dd.get_bool()) {{ if (!xdr_skip(dd, {tag})) return false; }}")
        elif d.type in PRIM_CODEC:
            out.append(f"{ind}dd.get_{PRIM_CODEC[d.type]}();")
        elif d.type in self.enums:  # its decoder checks the value
            out.append(f"{ind}{{ {self.q(d.type)} x{{}}; if (!xdr_decode(dd, x)) return false; }}")
        else:
            out.append(f"{ind}if (!xdr_skip(dd, std::type_identity<{self.q(d.type)}>{{}})) return false;")

    def skipped(self):
        """The structs and unions the --skip roots hold, the roots included."""
        seen, todo = set(), list(self.skip_roots)
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            if n not in self.defined:
                raise SyntaxError(f"--skip {n}: not a struct or union of this specification")
            seen.add(n)
            kind, body = self.defined[n]
            decls = self.fields(kind, body)
            for d in decls:
                acc = set()
                self.needs(d, acc)
                todo += sorted(acc)
        return seen

    # -- ordering ------------------------------------------------------------------------
    @staticmethod
    def fields(kind, body):
        """A struct's declarations, or a union's arms (its default arm last)."""
        return body if kind == "struct" else [a for _, a in body[1]] + ([body[2]] if body[2] else [])

    def needs(self, d, acc, depth=0):
        """The struct/union names a declaration refers to, through typedefs."""
        if d.kind == "void" or d.type in ("opaque", "string") or depth > 16:
            return
        if d.type in self.defined:
            acc.add(d.type)
        elif d.type in self.aliases:
            self.needs(self.aliases[d.type], acc, depth + 1)

    def ordered_defs(self):
        """Structs and unions so that each follows every type it holds: union members,
        std::optional and std::array need complete types. Spec order where it can."""
        deps = {}
        for name, (kind, body) in self.defined.items():
            acc = set()
            decls = self.fields(kind, body)
            for d in decls:
                if d.kind == "opt" and d.type in self.list_nodes:
                    continue
                self.needs(d, acc)
            acc.discard(name)
            deps[name] = acc
        out, state = [], {}

        def visit(n):
            if state.get(n) == 2:
                return
            if state.get(n) == 1:
                raise SyntaxError(f"{n} contains itself")
            state[n] = 1
            for m in sorted(deps[n]):
                visit(m)
            state[n] = 2
            out.append(n)

        for kind, name, _ in self.p.defs:
            if kind in ("struct", "union"):
                visit(name)
        return out

    # -- whole definitions ---------------------------------------------------------------
    def members(self, decls, skip=None):
        lines = []
        for d in decls:
            if d.kind == "void" or d.name == skip:
                continue
            lines.append(f"    {self.cxx_type(d)} {d.name}{{}};")
        return lines

    def const_decl(self, name, val):
        v = self.eval(val)
        if 0 <= v <= 0xffffffff:
            t = "uint32_t"
        elif -0x80000000 <= v < 0:
            t = "int32_t"
        elif v > 0:
            t = "uint64_t"
            val = f"{v:#x}ull" if not val.startswith("0x") else val + "ull"
        else:
            t = "int64_t"
        return f"inline constexpr {t} {name} = {val};"

    def generate(self):
        h, c = [], []
        for name, val in self.p.consts:
            h.append(self.const_decl(name, val))
        for prog, pnum, versions in self.p.programs:
            h.append(f"inline constexpr uint32_t {prog} = {pnum};")
            for vname, vnum, procs in versions:
                h.append(f"inline constexpr uint32_t {vname} = {vnum};")
                for pname, n, _, _ in procs:
                    h.append(f"inline constexpr uint32_t {pname} = {n};")
        for kind, name, body in self.p.defs:
            if kind == "enum":
                self.gen_enum(name, body, h, c)
        # Forward declarations let typedefs, vectors and lists refer ahead.
        for kind, name, body in self.p.defs:
            if kind in ("struct", "union"):
                h.append(f"struct {name};")
        if any(kind == "union" for kind, _, _ in self.p.defs):
            # What an accessor of a union arm that is not live throws.
            h.append("[[noreturn]] void bad_arm();  // throws std::bad_variant_access")
            c.append("void bad_arm() { throw std::bad_variant_access(); }")
        for kind, name, body in self.p.defs:
            if kind == "typedef" and body.name not in PRIM_CODEC:
                self.gen_typedef(name, body, h, c)
        self.skip = self.skipped()
        for name in self.ordered_defs():
            kind, body = self.defined[name]
            getattr(self, "gen_" + kind)(name, body, h, c)
        if self.p.programs:
            self.gen_proc_codecs(h, c)
        return h, c

    def gen_proc_codecs(self, h, c):
        """Every procedure's argument and result codecs as one table (for fuzzing and
        tests): each entry decodes a body and, when it decodes, re-encodes it."""
        h.append("// Every procedure of this specification's programs: decode-then-encode of its")
        h.append("// arguments and results (nullptr for void).")
        h.append("std::span<const xdr::ProcCodec> proc_codecs();")
        rows, done = [], set()
        for prog, _, versions in self.p.programs:
            for vname, _, procs in versions:
                for pname, _, arg, res in procs:
                    fns = []
                    for t in (arg, res):
                        if t == "void":
                            fns.append("nullptr")
                            continue
                        fn = f"roundtrip_{t}"
                        fns.append(fn)
                        if fn in done:
                            continue
                        done.add(fn)
                        c.append(f"static bool {fn}(std::span<const uint8_t> in, std::vector<uint8_t>& out) {{")
                        c.append("    xdr::Decoder dd(in);")
                        c.append(f"    {self.cxx_type(self.resolve(Decl(t, 'v')))} v{{}};")
                        self.dec_field(Decl(t, "v"), "v", c)
                        c.append("    if (!dd.ok()) return false;")
                        c.append("    xdr::Encoder e(out);")
                        self.enc_field(Decl(t, "v"), "v", c)
                        c.append("    return true;")
                        c.append("}")
                    rows.append(f'    {{{prog}, {vname}, {pname}, "{pname}", {fns[0]}, {fns[1]}}},')
        c.append("static const xdr::ProcCodec kProcCodecs[] = {")
        c += rows
        c.append("};")
        c.append("std::span<const xdr::ProcCodec> proc_codecs() { return kProcCodecs; }")

    def protos(self, name, h):
        h.append(f"void xdr_encode(xdr::Encoder& e, const {name}& v);")
        h.append(f"bool xdr_decode(xdr::Decoder& dd, {name}& v);")

    def gen_typedef(self, _name, d, h, c):
        h.append(f"using {d.name} = {self.cxx_type(d)};")

    def gen_enum(self, name, items, h, c):
        h.append(f"enum {name} : int32_t {{")
        h += [f"    {n} = {v}," for n, v in items]
        h.append("};")
        h.append(f"bool xdr_decode(xdr::Decoder& dd, {name}& v);")
        # The enumerator's name for logs and metrics labels; nullptr for a value the
        # declaration does not list.
        h.append(f"const char* enum_name({name} v);")
        # One case per value: the first enumerator that names it (duplicates are legal).
        distinct = {}
        for n, v in items:
            distinct.setdefault(self.eval(v), n)
        c.append(f"const char* enum_name({name} v) {{")
        c.append("    switch (v) {")
        c += [f"    case {n}: return \"{n}\";" for n in distinct.values()]
        c.append("    }")
        c.append("    return nullptr;")
        c.append("}")
        # RFC 4506 §4.3: an enum holds only the values its declaration lists; any other
        # value makes the whole item undecodable. (Encoding stays inline: put_i32.)
        c.append(f"bool xdr_decode(xdr::Decoder& dd, {name}& v) {{")
        c.append("    const int32_t x = dd.get_i32();")
        c.append("    switch (x) {")
        c += [f"    case {n}:" for n in distinct.values()]
        c.append(f"        v = static_cast<{name}>(x);")
        c.append("        return dd.ok();")
        c.append("    default:")
        c.append("        dd.fail();")
        c.append("        return false;")
        c.append("    }")
        c.append("}")

    def gen_struct(self, name, decls, h, c):
        skip = self.list_nodes.get(name)
        h.append(f"struct {name} {{")
        h += self.members(decls, skip)
        h.append("};")
        self.protos(name, h)
        size = self.wire_size(Decl(name, "v"))
        if size is not None:
            # Always the same size (fattr3, wcc_attr, ...): written in place into space
            # taken once, rather than word by word (each put_u32 checks capacity).
            h.append(f"void xdr_store(uint8_t* p, const {name}& v);  // its {size} bytes at p")
            c.append(f"void xdr_store(uint8_t* p, const {name}& v) {{")
            at = 0
            for d in decls:
                self.store_field(d, f"v.{d.name}", str(at), c)
                at += self.wire_size(d)
            c.append("}")
            c.append(f"void xdr_encode(xdr::Encoder& e, const {name}& v) {{")
            c.append(f"    if (uint8_t* p = e.extend({size})) xdr_store(p, v);")
            c.append("}")
        else:
            c.append(f"void xdr_encode(xdr::Encoder& e, const {name}& v) {{")
            for d in decls:
                if d.name != skip:
                    self.enc_field(d, f"v.{d.name}", c)
            c.append("}")
        c.append(f"bool xdr_decode(xdr::Decoder& dd, {name}& v) {{")
        for d in decls:
            if d.name != skip:
                self.dec_field(d, f"v.{d.name}", c)
        c.append("    return dd.ok();")
        c.append("}")
        if name in self.skip:
            h.append(f"bool xdr_skip(xdr::Decoder& dd, std::type_identity<{name}>);")
            c.append(f"bool xdr_skip(xdr::Decoder& dd, std::type_identity<{name}>) {{")
            for d in decls:
                if d.name != skip:
                    self.skip_field(d, c)
            c.append("    return dd.ok();")
            c.append("}")

    def gen_union(self, name, body, h, c):
        """A tagged variant (see the file comment): the discriminant and one live arm."""
        disc, arms, default = body
        named, index = [], {}  # arms with data, in order; arm name -> variant index
        for _, d in arms + ([([], default)] if default else []):
            if d.kind != "void" and d.name not in index:
                index[d.name] = len(named) + 1
                named.append(d)

        def arm_index(d):
            return 0 if d is None or d.kind == "void" else index[d.name]

        dt = self.cxx_type(self.resolve(Decl(disc.type, disc.name)))
        dn = disc.name
        # The arm a default-constructed union holds: the one discriminant 0 selects.
        zero = None
        for values, d in arms:
            if any(self.eval(v) == 0 for v in values):
                zero = arm_index(d)
                break
        if zero is None:
            zero = arm_index(default)
        types = {index[d.name]: self.cxx_type(d) for d in named}
        h.append(f"struct {name} {{")
        # Special members live in the .cpp: every includer would otherwise instantiate
        # them again (with std::variant, seconds of compile time per file for the big
        # COMPOUND unions).
        h.append(f"    {name}();")
        h.append(f"    explicit {name}({dt} d);")
        h.append(f"    {name}(const {name}& o);")
        h.append(f"    {name}({name}&& o) noexcept;")
        h.append(f"    {name}& operator=(const {name}& o);")
        h.append(f"    {name}& operator=({name}&& o) noexcept;")
        h.append(f"    ~{name}();")
        h.append(f"    {dt} {dn}() const {{ return disc_; }}")
        h.append(f"    // Sets the discriminant; when it selects another arm, that arm becomes the live")
        h.append(f"    // one, value-initialized.")
        h.append(f"    {name}& set_{dn}({dt} d) {{")
        h.append("        disc_ = d;")
        h.append("        if (const uint32_t a = arm_of(d); a != arm_) select(a);")
        h.append("        return *this;")
        h.append("    }")
        for d in named:
            t = types[index[d.name]]
            i = index[d.name]
            h.append(f"    {t}& {d.name}() {{ if (arm_ != {i}) bad_arm(); return u_.a{i}; }}")
            h.append(f"    const {t}& {d.name}() const {{ if (arm_ != {i}) bad_arm(); return u_.a{i}; }}")
        h.append("")
        h.append("private:")
        h.append(f"    static uint32_t arm_of({dt} d);")
        h.append("    void select(uint32_t a);  // destroys the live arm, value-initializes arm a")
        h.append("    void destroy() noexcept;")
        h.append(f"    {dt} disc_{{}};")
        h.append("    uint32_t arm_ = 0;  // the live member of u_; 0: none (a void arm)")
        if named:
            h.append("    union U {")
            h.append("        U() {}")
            h.append("        ~U() {}")
            for i, t in sorted(types.items()):
                h.append(f"        {t} a{i};")
            h.append("    } u_;")
        h.append(f"    friend void xdr_encode(xdr::Encoder& e, const {name}& v);")
        h.append(f"    friend bool xdr_decode(xdr::Decoder& dd, {name}& v);")
        h.append("};")
        self.protos(name, h)

        def cases(values):
            return [f"    case static_cast<int64_t>({self.value(v)}):" for v in values]

        def construct(init):
            """Constructs arm `a` (a name in the emitted code) from init(i), and records it."""
            c.append("    switch (a) {")
            for i, t in sorted(types.items()):
                c.append(f"    case {i}: new (&u_.a{i}) {t}({init(i)}); break;")
            c.append("    default: break;")
            c.append("    }")
            c.append("    arm_ = a;")

        c.append(f"{name}::{name}() {{ select({zero}); }}")
        c.append(f"{name}::{name}({dt} d) : disc_(d) {{ select(arm_of(d)); }}")
        c.append(f"{name}::{name}(const {name}& o) : disc_(o.disc_) {{")
        c.append("    const uint32_t a = o.arm_;")
        construct(lambda i: f"o.u_.a{i}")
        c.append("}")
        c.append(f"{name}::{name}({name}&& o) noexcept : disc_(o.disc_) {{")
        c.append("    const uint32_t a = o.arm_;")
        construct(lambda i: f"std::move(o.u_.a{i})")
        c.append("}")
        c.append(f"{name}& {name}::operator=(const {name}& o) {{")
        c.append(f"    if (this != &o) *this = {name}(o);")
        c.append("    return *this;")
        c.append("}")
        c.append(f"{name}& {name}::operator=({name}&& o) noexcept {{")
        c.append("    if (this == &o) return *this;")
        c.append("    destroy();")
        c.append("    disc_ = o.disc_;")
        c.append("    const uint32_t a = o.arm_;")
        construct(lambda i: f"std::move(o.u_.a{i})")
        c.append("    return *this;")
        c.append("}")
        c.append(f"{name}::~{name}() {{ destroy(); }}")
        c.append(f"void {name}::destroy() noexcept {{")
        if types:
            c.append("    switch (arm_) {")
            for i, t in sorted(types.items()):
                c.append(f"    case {i}: std::destroy_at(&u_.a{i}); break;")
            c.append("    default: break;")
            c.append("    }")
        c.append("    arm_ = 0;")
        c.append("}")
        c.append(f"uint32_t {name}::arm_of({dt} d) {{")
        c.append("    switch (static_cast<int64_t>(d)) {")
        for values, d in arms:
            c += cases(values)
            c.append(f"        return {arm_index(d)};")
        c.append("    default:")
        c.append(f"        return {arm_index(default)};")
        c.append("    }")
        c.append("}")
        c.append(f"void {name}::select(uint32_t a) {{")
        c.append("    destroy();")
        construct(lambda i: "")
        c.append("}")
        for i, t in sorted(types.items()):
            c.append(f"static_assert(std::is_nothrow_move_constructible_v<{t}>);")

        # Encoding: the discriminant, then the live arm.
        c.append(f"void xdr_encode(xdr::Encoder& e, const {name}& v) {{")
        self.enc_field(disc, "v.disc_", c)
        c.append("    switch (static_cast<int64_t>(v.disc_)) {")
        for values, d in arms:
            c += cases(values)
            if d.kind != "void":
                c.append("    {")
                self.enc_field(d, f"v.{d.name}()", c, "        ")
                c.append("        break;")
                c.append("    }")
            else:
                c.append("        break;")
        c.append("    default:")
        if default and default.kind != "void":
            c.append("    {")
            self.enc_field(default, f"v.{default.name}()", c, "        ")
            c.append("        break;")
            c.append("    }")
        else:
            c.append("        break;")
        c.append("    }")
        c.append("}")

        # Decoding: a discriminant no arm takes (and no default) makes the union
        # undecodable (RFC 4506 §4.15); so does one its enum does not list (§4.3).
        c.append(f"bool xdr_decode(xdr::Decoder& dd, {name}& v) {{")
        c.append(f"    {dt} d{{}};")
        self.dec_field(disc, "d", c)
        c.append("    if (!dd.ok()) return false;")
        c.append("    switch (static_cast<int64_t>(d)) {")

        def dec_arm(d):
            if d.kind == "void":
                c.append("        v.select(0);")
                c.append("        v.disc_ = d;")
                c.append("        break;")
                return
            c.append("    {")
            c.append(f"        v.select({index[d.name]});")
            c.append("        v.disc_ = d;  // agrees with the arm even if the arm fails to decode")
            c.append(f"        auto& a = v.u_.a{index[d.name]};")
            self.dec_field(d, "a", c, "        ")
            c.append("        break;")
            c.append("    }")

        for values, d in arms:
            c += cases(values)
            dec_arm(d)
        c.append("    default:")
        if default:
            dec_arm(default)
        else:
            c.append("        dd.fail();")
            c.append("        return false;")
        c.append("    }")
        c.append("    v.disc_ = d;")
        c.append("    return dd.ok();")
        c.append("}")
        if name not in self.skip:
            return
        h.append(f"bool xdr_skip(xdr::Decoder& dd, std::type_identity<{name}>);")
        c.append(f"bool xdr_skip(xdr::Decoder& dd, std::type_identity<{name}>) {{")
        c.append(f"    {dt} d{{}};")
        self.dec_field(disc, "d", c)
        c.append("    if (!dd.ok()) return false;")
        c.append("    switch (static_cast<int64_t>(d)) {")
        for values, d in arms:
            c += cases(values)
            c.append("    {")
            self.skip_field(d, c, "        ")
            c.append("        break;")
            c.append("    }")
        c.append("    default:")
        if default:
            c.append("    {")
            self.skip_field(default, c, "        ")
            c.append("        break;")
            c.append("    }")
        else:
            c.append("        dd.fail();")
            c.append("        return false;")
        c.append("    }")
        c.append("    return dd.ok();")
        c.append("}")


def main():
    spec, out_dir, ns = sys.argv[1:4]
    roots = []
    rest = sys.argv[4:]
    while rest:
        if rest[0] == "--skip" and len(rest) > 1:
            roots += [r for r in rest[1].split(",") if r]
            rest = rest[2:]
        else:
            raise SystemExit(f"xdrgen: unknown argument {rest[0]!r}")
    stem = os.path.splitext(os.path.basename(spec))[0]
    with open(spec) as f:
        parser = Parser(tokenize(f.read())).parse()
    h, c = Generator(parser, ns, stem, roots).generate()
    os.makedirs(out_dir, exist_ok=True)
    header = [f"// Generated by xdr/gen/xdrgen.py from {os.path.basename(spec)}. Do not edit.",
              "#pragma once", "#include <array>", "#include <cstdint>", "#include <optional>",
              "#include <span>", "#include <string_view>", "#include <type_traits>", "#include <vector>",
              '#include "xdr/runtime/xdr.h"', "", f"namespace {ns} {{", ""] + h + ["", f"}}  // namespace {ns}", ""]
    source = [f"// Generated by xdr/gen/xdrgen.py from {os.path.basename(spec)}. Do not edit.",
              f'#include "{stem}.h"', "#include <cstring>", "#include <new>",
              "#include <type_traits>", "#include <utility>", "#include <variant>", "", f"namespace {ns} {{", ""] + c + \
             ["", f"}}  // namespace {ns}", ""]
    for path, lines in ((f"{out_dir}/{stem}.h", header), (f"{out_dir}/{stem}.cpp", source)):
        text = "\n".join(lines)
        try:
            with open(path) as f:
                if f.read() == text:
                    continue
        except OSError:
            pass
        with open(path, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
