#!/usr/bin/env python3
"""xdrgen: compiles an XDR (RFC 4506) specification into C++20 codecs.

    xdrgen.py SPEC.x OUT_DIR NAMESPACE

writes OUT_DIR/<stem>.h and OUT_DIR/<stem>.cpp. Mapping:

    int / unsigned int / hyper / unsigned hyper / bool -> int32_t / uint32_t / int64_t / uint64_t / bool
    enum                    -> unscoped enum : int32_t (RFC constants keep their names)
    struct                  -> struct
    union switch (d)        -> struct holding the discriminant and every arm (only the
                               arm the discriminant selects is encoded or decoded)
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
Enums are closed (RFC 4506 §4.3): decoding a value the declaration does not list fails.
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
    def __init__(self, parser, ns, stem):
        self.p, self.ns, self.stem = parser, ns, stem
        self.aliases = {}    # typedef name -> Decl
        self.list_nodes = {}  # struct name -> name of its self-referential field
        self.enums = set()
        for kind, name, body in parser.defs:
            if kind == "typedef":
                self.aliases[body.name] = body
            elif kind == "enum":
                self.enums.add(name)
            elif kind == "struct":
                for d in body:
                    if d.kind == "opt" and d.type == name:
                        self.list_nodes[name] = d.name

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
        if d.kind == "fixed":
            return f"std::array<{d.type}, {d.size}>"
        if d.kind == "var":
            return f"std::vector<{d.type}>"
        if d.kind == "opt":
            if d.type in self.list_nodes:
                return f"std::vector<{d.type}>"
            return f"std::optional<{d.type}>"
        return d.type

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
            out.append(f"{ind}  if (!dd.ok() || n > uint32_t({bound}) || n > dd.remaining() / 4) return false;")
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

    # -- whole definitions ---------------------------------------------------------------
    def members(self, decls, skip=None):
        lines = []
        for d in decls:
            if d.kind == "void" or d.name == skip:
                continue
            t = self.cxx_type(d)
            if t == d.name:  # a member named like its type: qualify the type
                t = f"::{self.ns}::{t}"
            lines.append(f"    {t} {d.name}{{}};")
        return lines

    def generate(self):
        h, c = [], []
        for name, val in self.p.consts:
            h.append(f"inline constexpr uint32_t {name} = {val};")
        for prog, pnum, versions in self.p.programs:
            h.append(f"inline constexpr uint32_t {prog} = {pnum};")
            for vname, vnum, procs in versions:
                h.append(f"inline constexpr uint32_t {vname} = {vnum};")
                for pname, n, _, _ in procs:
                    h.append(f"inline constexpr uint32_t {pname} = {n};")
        # Forward declarations let definitions refer to each other in any order.
        for kind, name, body in self.p.defs:
            if kind in ("struct", "union"):
                h.append(f"struct {name};")
        for kind, name, body in self.p.defs:
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
        # RFC 4506 §4.3: an enum holds only the values its declaration lists; any other
        # value makes the whole item undecodable. (Encoding stays inline: put_i32.)
        c.append(f"bool xdr_decode(xdr::Decoder& dd, {name}& v) {{")
        c.append("    const int32_t x = dd.get_i32();")
        c.append("    switch (x) {")
        seen = set()
        for n, v in items:
            if v not in seen:
                seen.add(v)
                c.append(f"    case {n}:")
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

    def gen_union(self, name, body, h, c):
        disc, arms, default = body
        seen, decls = set(), []
        for _, d in arms + ([([], default)] if default else []):
            if d.kind != "void" and d.name not in seen:
                seen.add(d.name)
                decls.append(d)
        h.append(f"struct {name} {{")
        h += self.members([disc] + decls)
        h.append("};")
        self.protos(name, h)
        disc_expr = f"v.{disc.name}"
        sw = f"static_cast<int64_t>({disc_expr})"
        for fn, coder in (("encode", self.enc_field), ("decode", self.dec_field)):
            if fn == "encode":
                c.append(f"void xdr_encode(xdr::Encoder& e, const {name}& v) {{")
            else:
                c.append(f"bool xdr_decode(xdr::Decoder& dd, {name}& v) {{")
            coder(disc, disc_expr, c)
            if fn == "decode":
                c.append("    if (!dd.ok()) return false;")
            c.append(f"    switch ({sw}) {{")
            for values, d in arms:
                for val in values:
                    c.append(f"    case static_cast<int64_t>({self.value(val)}):")
                c.append("    {")
                coder(d, f"v.{d.name}", c, "        ")
                c.append("        break;")
                c.append("    }")
            c.append("    default:")
            if default:
                c.append("    {")
                coder(default, f"v.{default.name}", c, "        ")
                c.append("        break;")
                c.append("    }")
            elif fn == "decode":
                c.append("        return false;")
            else:
                c.append("        break;")
            c.append("    }")
            if fn == "decode":
                c.append("    return dd.ok();")
            c.append("}")


def main():
    spec, out_dir, ns = sys.argv[1:4]
    stem = os.path.splitext(os.path.basename(spec))[0]
    with open(spec) as f:
        parser = Parser(tokenize(f.read())).parse()
    h, c = Generator(parser, ns, stem).generate()
    os.makedirs(out_dir, exist_ok=True)
    header = [f"// Generated by xdr/gen/xdrgen.py from {os.path.basename(spec)}. Do not edit.",
              "#pragma once", "#include <array>", "#include <cstdint>", "#include <optional>",
              "#include <span>", "#include <string_view>", "#include <vector>",
              '#include "xdr/runtime/xdr.h"', "", f"namespace {ns} {{", ""] + h + ["", f"}}  // namespace {ns}", ""]
    source = [f"// Generated by xdr/gen/xdrgen.py from {os.path.basename(spec)}. Do not edit.",
              f'#include "{stem}.h"', "#include <cstring>", "", f"namespace {ns} {{", ""] + c + \
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
