// XDR runtime for the generated codecs (RFC 4506).
//
// Decoding borrows: variable-length opaque and strings decode to views into the
// buffer being decoded, never to copies. The caller keeps that buffer alive for as
// long as the decoded value is used (one RPC call).
//
// Encoding appends to a byte vector. Opaques may be marked "external" (the payload
// of a READ, RFC 8166 §3.4.2 DDP-eligible items): each is then not copied into the
// vector but recorded as a segment, in stream order, so the transport can send it
// from where it already is — gathered by writev on TCP, or RDMA-written from
// registered memory on RDMA (one write chunk per segment).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace nfsrdmad::xdr {

inline constexpr size_t pad4(size_t n) { return (4 - (n & 3)) & 3; }

// Payload that travels outside the inline XDR stream (RFC 8166 §3.4: a chunk).
struct ExternalSegment {
    size_t offset = 0;  // where in the inline bytes the data would stand
    std::span<const uint8_t> data;
    size_t pad = 0;     // XDR pad bytes that follow it in the inline bytes
};

// Big-endian words written in place, into space taken with Encoder::extend (the
// generated xdr_store of fixed-size structs).
inline void store_u32(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}
inline void store_u64(uint8_t* p, uint64_t v) {
    store_u32(p, uint32_t(v >> 32));
    store_u32(p + 4, uint32_t(v));
}

class Encoder {
public:
    explicit Encoder(std::vector<uint8_t>& out) : out_(&out) {}
    // A counting encoder: computes the encoded size, stores nothing.
    Encoder() = default;

    size_t size() const { return out_ ? out_->size() - base_ : counted_; }
    bool counting() const { return out_ == nullptr; }

    void put_u32(uint32_t v) {
        uint8_t b[4];
        store_u32(b, v);
        append(b, 4);
    }
    // n more bytes at the end, for the caller to fill at once (store_u32, memcpy): one
    // capacity check for the lot. nullptr from a counting encoder, which only counts them.
    // The pointer is good until the next call that appends.
    uint8_t* extend(size_t n) {
        if (!out_) {
            counted_ += n;
            return nullptr;
        }
        const size_t at = out_->size();
        out_->resize(at + n);
        return out_->data() + at;
    }
    void put_i32(int32_t v) { put_u32(static_cast<uint32_t>(v)); }
    void put_u64(uint64_t v) {
        uint8_t b[8];
        store_u64(b, v);
        append(b, 8);
    }
    void put_i64(int64_t v) { put_u64(static_cast<uint64_t>(v)); }
    void put_bool(bool v) { put_u32(v ? 1 : 0); }

    // Fixed-length opaque: data then padding.
    void put_fixed(const uint8_t* p, size_t n) {
        if (!out_) { counted_ += n + pad4(n); return; }
        out_->insert(out_->end(), p, p + n);
        out_->insert(out_->end(), pad4(n), 0);
    }
    // Variable-length opaque: length, data, padding.
    void put_opaque(std::span<const uint8_t> d) {
        put_u32(static_cast<uint32_t>(d.size()));
        if (out_ && take_hint(d)) {
            externals_.push_back({out_->size() - base_, d, pad4(d.size())});
            out_->insert(out_->end(), pad4(d.size()), 0);
            return;
        }
        put_fixed(d.data(), d.size());
    }
    void put_string(std::string_view s) {
        put_opaque({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
    }

    // Marks an opaque that must not be copied (see file comment): the put_opaque() of
    // exactly this span becomes an ExternalSegment. Any number may be marked.
    void add_external(std::span<const uint8_t> d) {
        if (d.data() == nullptr) return;
        if (first_hint_.data() == nullptr)
            first_hint_ = d;  // the usual one (a READ's data): no allocation
        else
            hints_.push_back(d);
    }
    // The external opaques encoded so far, in stream order (offsets ascending).
    const std::vector<ExternalSegment>& externals() const { return externals_; }
    // The same, moved out (the encoder is done): no copy of the vector.
    std::vector<ExternalSegment> take_externals() { return std::move(externals_); }

    // Offsets reported by size() and externals() count from here (the start of the
    // RPC message when the vector already holds a record mark, for example).
    void set_base(size_t b) { base_ = b; }

    // Editing what was written (a storing encoder only; offsets count from the base):
    // overwrite a word encoded earlier (a count or status known only at the end), drop
    // everything from `size` on (a result that must be replaced), view the bytes.
    void patch_u32(size_t offset, uint32_t v) {
        store_u32(out_->data() + base_ + offset, v);
    }
    void truncate(size_t size) {
        out_->resize(base_ + size);
        while (!externals_.empty() && externals_.back().offset >= size) externals_.pop_back();
    }
    std::span<const uint8_t> written() const {
        return std::span<const uint8_t>(*out_).subspan(base_);
    }

private:
    // One range insert: about a quarter of the instructions of four push_backs (each checks
    // capacity) or of resize() (out of line, zero-fills). GCC 12 -O2 warns
    // (stringop-overflow) about such an insert into a vector it sees empty in some inlined
    // callers: a false positive, insert grows the vector before it copies.
    void append(const uint8_t* b, size_t n) {
        if (!out_) {
            counted_ += n;
            return;
        }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
        out_->insert(out_->end(), b, b + n);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    }

    bool take_hint(std::span<const uint8_t> d) {
        if (first_hint_.data() == d.data() && first_hint_.size() == d.size() && d.data()) {
            first_hint_ = {};
            return true;
        }
        for (auto it = hints_.begin(); it != hints_.end(); ++it) {
            if (it->data() == d.data() && it->size() == d.size()) {
                hints_.erase(it);
                return true;
            }
        }
        return false;
    }

    std::vector<uint8_t>* out_ = nullptr;
    size_t counted_ = 0;
    size_t base_ = 0;
    std::span<const uint8_t> first_hint_;          // marked, not yet encoded: the first
    std::vector<std::span<const uint8_t>> hints_;  // and any more
    std::vector<ExternalSegment> externals_;
};

// A read chunk (RFC 8166 §3.4.5): payload that was pulled by RDMA Read and is not in
// the inline stream. Its position is an offset in the XDR stream of the RPC message
// (the whole stream, as if every chunk's data item were inline); the opaque whose
// data starts there decodes to the chunk's bytes.
struct ReadChunk {
    size_t position = 0;
    std::span<const uint8_t> data;
};

class Decoder {
public:
    explicit Decoder(std::span<const uint8_t> in, size_t position_base = 0)
        : in_(in), stream_base_(position_base) {}

    bool ok() const { return ok_; }
    // A failed decoder stays failed: nothing is left to read (pos_ at the end), so each
    // read's bounds check alone turns it away (one compare, not two, on every word).
    void fail() { ok_ = false; pos_ = in_.size(); }
    size_t offset() const { return pos_; }
    size_t remaining() const { return ok_ ? in_.size() - pos_ : 0; }
    // The whole XDR stream as the sender encoded it: what precedes the decoded bytes
    // (the position base: an RPC call's header), the bytes themselves, and every read
    // chunk's data item with its padding, as if inline (RFC 8166 §3.4.5).
    size_t stream_size() const {
        size_t n = stream_base_ + in_.size();
        for (const ReadChunk& c : chunks_) n += c.data.size() + pad4(c.data.size());
        return n;
    }
    std::span<const uint8_t> rest() const { return in_.subspan(pos_); }
    // Forward to `offset` (an offset() this decoder or a copy had), without reading what
    // lies between. Only where no read chunk is left to take (unconsumed_chunks() == 0):
    // an opaque in between would have taken it. Fails otherwise, or backwards.
    void skip_to(size_t offset) {
        if (offset < pos_ || offset > in_.size() || next_chunk_ < chunks_.size()) fail();
        else pos_ = offset;
    }
    // The call's read chunks, positions ascending (RFC 8166 §3.4.5). Not copied: the
    // caller keeps them alive while decoding.
    void set_read_chunks(std::span<const ReadChunk> c) {
        chunks_ = c;
        next_chunk_ = 0;
    }
    // Chunks no opaque has taken. Nonzero after the arguments were decoded: a chunk
    // matches no XDR data item, and the call is GARBAGE_ARGS (RFC 8166 §4.5.2: a
    // mismatch between chunk offsets and the Payload stream).
    size_t unconsumed_chunks() const { return chunks_.size() - next_chunk_; }

    uint32_t get_u32() {
        if (in_.size() - pos_ < 4) [[unlikely]] { fail(); return 0; }
        const uint8_t* p = in_.data() + pos_;
        pos_ += 4;
        return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
    }
    int32_t get_i32() { return static_cast<int32_t>(get_u32()); }
    uint64_t get_u64() { uint64_t hi = get_u32(); return hi << 32 | get_u32(); }
    int64_t get_i64() { return static_cast<int64_t>(get_u64()); }
    bool get_bool() {
        uint32_t v = get_u32();
        if (v > 1) fail();  // RFC 4506 §4.4: only 0 and 1
        return v == 1;
    }
    std::span<const uint8_t> get_fixed(size_t n) {
        size_t total = n + pad4(n);
        if (in_.size() - pos_ < total) [[unlikely]] { fail(); return {}; }
        auto s = in_.subspan(pos_, n);
        pos_ += total;
        return s;
    }
    std::span<const uint8_t> get_opaque(uint32_t max) {
        uint32_t n = get_u32();
        if (!ok_ || n > max) { fail(); return {}; }
        if (next_chunk_ < chunks_.size()) {
            const ReadChunk& c = chunks_[next_chunk_];
            const size_t here = stream_base_ + pos_ + moved_;
            if (c.position == here) {
                // The data was moved out of line (RFC 8166 §3.4.5); so was its padding.
                if (n > c.data.size()) { fail(); return {}; }
                ++next_chunk_;
                moved_ += n + pad4(n);
                return c.data.first(n);
            }
            // Decoding went past the chunk: it starts inside some other item.
            if (c.position < here) { fail(); return {}; }
        }
        return get_fixed(n);
    }
    std::string_view get_string(uint32_t max) {
        auto s = get_opaque(max);
        return {reinterpret_cast<const char*>(s.data()), s.size()};
    }

private:
    std::span<const uint8_t> in_;
    size_t pos_ = 0;
    size_t stream_base_ = 0;
    bool ok_ = true;
    std::span<const ReadChunk> chunks_;
    size_t next_chunk_ = 0;  // the first chunk no opaque has taken yet
    size_t moved_ = 0;       // stream bytes taken from chunks so far (data and pad)
};

inline constexpr uint32_t kUnbounded = 0xffffffffu;

// One procedure of a generated program (xdrgen's proc_codecs()): its argument and result
// codecs, each decoding `in` and, when that succeeds, re-encoding the value into `out`.
// nullptr where the procedure takes or returns void.
struct ProcCodec {
    uint32_t prog, vers, proc;
    const char* name;
    bool (*args)(std::span<const uint8_t> in, std::vector<uint8_t>& out);
    bool (*res)(std::span<const uint8_t> in, std::vector<uint8_t>& out);
};

}  // namespace nfsrdmad::xdr
