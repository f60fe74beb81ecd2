// The harness's driver, first part (before the program, so that no macro of the
// program reaches it): a JSON reader, the decoding of arguments into the function's
// parameter types, and the canonical printing of results (sandbox/worker/values.py).
// The program follows under `#line 1 "main.cpp"`; then `signed main()` calls run().
// <bits/stdc++.h> first: the image holds it precompiled with these flags (toolchains/cpp.py),
// which gcc uses only when it is the first thing the file includes.
#include <bits/stdc++.h>
#include <unistd.h>

namespace __harness {

struct Json {
    enum Kind { Null, Bool, Int, Float, Str, Arr, Obj } kind = Null;
    bool b = false;
    long long i = 0;
    double f = 0;
    std::string s;
    std::vector<Json> items;
    std::vector<std::pair<std::string, Json>> fields;
};

[[noreturn]] inline void fail(const std::string& why) {
    std::fprintf(stderr, "harness driver: %s\n", why.c_str());
    std::exit(3);
}

struct Parser {
    const std::string& t;
    size_t p = 0;
    void ws() { while (p < t.size() && std::isspace((unsigned char)t[p])) ++p; }
    bool eat(const char* word) {
        size_t n = std::strlen(word);
        if (t.compare(p, n, word) == 0) { p += n; return true; }
        return false;
    }
    static void utf8(std::string& out, unsigned long c) {
        if (c < 0x80) out += (char)c;
        else if (c < 0x800) { out += (char)(0xC0 | (c >> 6)); out += (char)(0x80 | (c & 0x3F)); }
        else if (c < 0x10000) { out += (char)(0xE0 | (c >> 12)); out += (char)(0x80 | ((c >> 6) & 0x3F)); out += (char)(0x80 | (c & 0x3F)); }
        else { out += (char)(0xF0 | (c >> 18)); out += (char)(0x80 | ((c >> 12) & 0x3F)); out += (char)(0x80 | ((c >> 6) & 0x3F)); out += (char)(0x80 | (c & 0x3F)); }
    }
    std::string str() {
        if (!eat("\"")) fail("expected a string");
        std::string out;
        while (true) {
            if (p >= t.size()) fail("unterminated string");
            char c = t[p++];
            if (c == '"') break;
            if (c != '\\') { out += c; continue; }
            if (p >= t.size()) fail("bad escape");
            char e = t[p++];
            switch (e) {
                case 'n': out += '\n'; break; case 't': out += '\t'; break; case 'r': out += '\r'; break;
                case 'b': out += '\b'; break; case 'f': out += '\f'; break; case '/': out += '/'; break;
                case '\\': out += '\\'; break; case '"': out += '"'; break;
                case 'u': {
                    unsigned long c1 = std::strtoul(t.substr(p, 4).c_str(), nullptr, 16); p += 4;
                    if (c1 >= 0xD800 && c1 < 0xDC00 && t.compare(p, 2, "\\u") == 0) {
                        unsigned long c2 = std::strtoul(t.substr(p + 2, 4).c_str(), nullptr, 16); p += 6;
                        c1 = 0x10000 + ((c1 - 0xD800) << 10) + (c2 - 0xDC00);
                    }
                    utf8(out, c1); break;
                }
                default: fail("bad escape");
            }
        }
        return out;
    }
    Json value(int depth = 0) {
        if (depth > 200) fail("nested too deeply");
        ws();
        Json v;
        if (p >= t.size()) fail("unexpected end");
        if (eat("null")) return v;
        if (eat("true")) { v.kind = Json::Bool; v.b = true; return v; }
        if (eat("false")) { v.kind = Json::Bool; return v; }
        if (eat("NaN")) { v.kind = Json::Float; v.f = NAN; return v; }
        if (eat("Infinity")) { v.kind = Json::Float; v.f = INFINITY; return v; }
        if (eat("-Infinity")) { v.kind = Json::Float; v.f = -INFINITY; return v; }
        char c = t[p];
        if (c == '"') { v.kind = Json::Str; v.s = str(); return v; }
        if (c == '[') {
            ++p; v.kind = Json::Arr; ws();
            if (p < t.size() && t[p] == ']') { ++p; return v; }
            while (true) {
                v.items.push_back(value(depth + 1)); ws();
                if (p < t.size() && t[p] == ',') { ++p; continue; }
                if (p < t.size() && t[p] == ']') { ++p; return v; }
                fail("expected , or ]");
            }
        }
        if (c == '{') {
            ++p; v.kind = Json::Obj; ws();
            if (p < t.size() && t[p] == '}') { ++p; return v; }
            while (true) {
                ws(); std::string key = str(); ws();
                if (!eat(":")) fail("expected :");
                v.fields.emplace_back(key, value(depth + 1)); ws();
                if (p < t.size() && t[p] == ',') { ++p; continue; }
                if (p < t.size() && t[p] == '}') { ++p; return v; }
                fail("expected , or }");
            }
        }
        size_t start = p;
        while (p < t.size() && std::strchr("+-0123456789.eE", t[p])) ++p;
        std::string text = t.substr(start, p - start);
        if (text.empty()) fail("unexpected character");
        if (text.find_first_of(".eE") == std::string::npos) {
            errno = 0;
            long long n = std::strtoll(text.c_str(), nullptr, 10);
            if (errno == 0) { v.kind = Json::Int; v.i = n; return v; }
        }
        v.kind = Json::Float; v.f = std::strtod(text.c_str(), nullptr);
        return v;
    }
};

inline Json parse(const std::string& text) { Parser parser{text}; Json v = parser.value(); parser.ws(); if (parser.p != text.size()) fail("trailing characters"); return v; }

template <class T, class = void> struct Decode;
template <class T> T decode(const Json& v) { return Decode<T>::get(v); }

template <class T> struct Decode<T, std::enable_if_t<std::is_integral<T>::value && !std::is_same<T, bool>::value && !std::is_same<T, char>::value>> {
    static T get(const Json& v) { if (v.kind != Json::Int) fail("expected an integer"); return (T)v.i; }
};
template <class T> struct Decode<T, std::enable_if_t<std::is_floating_point<T>::value>> {
    static T get(const Json& v) { if (v.kind == Json::Int) return (T)v.i; if (v.kind != Json::Float) fail("expected a number"); return (T)v.f; }
};
template <> struct Decode<bool> { static bool get(const Json& v) { if (v.kind != Json::Bool) fail("expected a boolean"); return v.b; } };
template <> struct Decode<std::string> { static std::string get(const Json& v) { if (v.kind != Json::Str) fail("expected a string"); return v.s; } };
template <> struct Decode<char> { static char get(const Json& v) { if (v.kind != Json::Str || v.s.size() != 1) fail("expected one character"); return v.s[0]; } };
template <class T> struct Decode<std::vector<T>> {
    static std::vector<T> get(const Json& v) { if (v.kind != Json::Arr) fail("expected an array"); std::vector<T> out; for (auto& x : v.items) out.push_back(decode<T>(x)); return out; }
};
template <class T> struct Decode<std::deque<T>> {
    static std::deque<T> get(const Json& v) { auto items = decode<std::vector<T>>(v); return std::deque<T>(items.begin(), items.end()); }
};
template <class T> struct Decode<std::set<T>> {
    static std::set<T> get(const Json& v) { auto items = decode<std::vector<T>>(v); return std::set<T>(items.begin(), items.end()); }
};
template <class T> struct Decode<std::unordered_set<T>> {
    static std::unordered_set<T> get(const Json& v) { auto items = decode<std::vector<T>>(v); return std::unordered_set<T>(items.begin(), items.end()); }
};
template <class T> struct Decode<std::optional<T>> {
    static std::optional<T> get(const Json& v) { if (v.kind == Json::Null) return std::nullopt; return decode<T>(v); }
};
template <class K> K decode_key(const std::string& key) {
    if constexpr (std::is_same<K, std::string>::value) return key; else return decode<K>(parse(key));
}
template <class M> M decode_map(const Json& v) {
    if (v.kind != Json::Obj) fail("expected an object");
    M out;
    for (auto& kv : v.fields) out.emplace(decode_key<typename M::key_type>(kv.first), decode<typename M::mapped_type>(kv.second));
    return out;
}
template <class K, class V> struct Decode<std::map<K, V>> { static std::map<K, V> get(const Json& v) { return decode_map<std::map<K, V>>(v); } };
template <class K, class V> struct Decode<std::unordered_map<K, V>> { static std::unordered_map<K, V> get(const Json& v) { return decode_map<std::unordered_map<K, V>>(v); } };
template <class... Ts> struct Decode<std::tuple<Ts...>> {
    template <size_t... I> static std::tuple<Ts...> get_(const Json& v, std::index_sequence<I...>) { return std::tuple<Ts...>(decode<Ts>(v.items[I])...); }
    static std::tuple<Ts...> get(const Json& v) { if (v.kind != Json::Arr || v.items.size() != sizeof...(Ts)) fail("expected an array for a tuple"); return get_(v, std::index_sequence_for<Ts...>{}); }
};
template <class A, class B> struct Decode<std::pair<A, B>> {
    static std::pair<A, B> get(const Json& v) { if (v.kind != Json::Arr || v.items.size() != 2) fail("expected an array of two"); return {decode<A>(v.items[0]), decode<B>(v.items[1])}; }
};

inline void quote(const std::string& s, std::string& out) {
    out += '"';
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break; case '\\': out += "\\\\"; break; case '\n': out += "\\n"; break;
            case '\r': out += "\\r"; break; case '\t': out += "\\t"; break;
            default:
                if (c < 0x20 || c == 0x7f) { char buf[8]; std::snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
                else out += (char)c;
        }
    }
    out += '"';
}
// The shortest text that reads back as exactly `x` in its own type (a long double in
// long double precision: its integers up to 2^64 print every digit).
template <class F> void shortest(F x, std::string& out, int most) {
    if (std::isnan(x)) { out += "NaN"; return; }
    if (std::isinf(x)) { out += x > 0 ? "Infinity" : "-Infinity"; return; }
    char buf[80];
    for (int digits = 1; digits <= most; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*Lg", digits, (long double)x);
        if constexpr (std::is_same<F, long double>::value) { if (std::strtold(buf, nullptr) == x) break; }
        else if ((F)std::strtod(buf, nullptr) == x) break;
    }
    out += buf;
}
inline void encode(bool v, std::string& out) { out += v ? "true" : "false"; }
inline void encode(char v, std::string& out) { quote(std::string(1, v), out); }
inline void encode(const std::string& v, std::string& out) { quote(v, out); }
inline void encode(const char* v, std::string& out) { quote(v, out); }
inline void encode(float v, std::string& out) { shortest(v, out, 9); }
inline void encode(double v, std::string& out) { shortest(v, out, 17); }
inline void encode(long double v, std::string& out) { shortest(v, out, 21); }
template <class T> std::enable_if_t<std::is_integral<T>::value> encode(T v, std::string& out) { out += std::to_string(v); }
template <class T> void encode(const std::optional<T>& v, std::string& out);
template <class T> void encode(const std::vector<T>& v, std::string& out);
template <class T> void encode(const std::deque<T>& v, std::string& out);
template <class T> void encode(const std::set<T>& v, std::string& out);
template <class T> void encode(const std::unordered_set<T>& v, std::string& out);
template <class K, class V> void encode(const std::map<K, V>& v, std::string& out);
template <class K, class V> void encode(const std::unordered_map<K, V>& v, std::string& out);
template <class A, class B> void encode(const std::pair<A, B>& v, std::string& out);
template <class... Ts> void encode(const std::tuple<Ts...>& v, std::string& out);

template <class It> void encode_seq(It begin, It end, std::string& out) {
    out += '[';
    for (It it = begin; it != end; ++it) { if (it != begin) out += ','; encode(*it, out); }
    out += ']';
}
template <class It> void encode_sorted(It begin, It end, std::string& out) {
    std::vector<std::string> texts;
    for (It it = begin; it != end; ++it) { std::string s; encode(*it, s); texts.push_back(s); }
    std::sort(texts.begin(), texts.end());
    out += '[';
    for (size_t k = 0; k < texts.size(); ++k) { if (k) out += ','; out += texts[k]; }
    out += ']';
}
template <class M> void encode_map(const M& m, std::string& out) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (auto& kv : m) {
        std::string key, value; encode(kv.first, key);
        if (key.empty() || key[0] != '"') { std::string quoted; quote(key, quoted); key = quoted; }
        encode(kv.second, value); pairs.emplace_back(key, value);
    }
    std::sort(pairs.begin(), pairs.end());
    out += '{';
    for (size_t k = 0; k < pairs.size(); ++k) { if (k) out += ','; out += pairs[k].first; out += ':'; out += pairs[k].second; }
    out += '}';
}
template <class T> void encode(const std::optional<T>& v, std::string& out) { if (v) encode(*v, out); else out += "null"; }
template <class T> void encode(const std::vector<T>& v, std::string& out) { encode_seq(v.begin(), v.end(), out); }
template <class T> void encode(const std::deque<T>& v, std::string& out) { encode_seq(v.begin(), v.end(), out); }
template <class T> void encode(const std::set<T>& v, std::string& out) { encode_sorted(v.begin(), v.end(), out); }
template <class T> void encode(const std::unordered_set<T>& v, std::string& out) { encode_sorted(v.begin(), v.end(), out); }
template <class K, class V> void encode(const std::map<K, V>& v, std::string& out) { encode_map(v, out); }
template <class K, class V> void encode(const std::unordered_map<K, V>& v, std::string& out) { encode_map(v, out); }
template <class A, class B> void encode(const std::pair<A, B>& v, std::string& out) { out += '['; encode(v.first, out); out += ','; encode(v.second, out); out += ']'; }
template <class... Ts> void encode(const std::tuple<Ts...>& v, std::string& out) {
    out += '[';
    bool first = true;
    std::apply([&](const auto&... x) { ((out += first ? "" : ",", first = false, encode(x, out)), ...); }, v);
    out += ']';
}

inline void write_all(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) { ssize_t n = ::write(fd, text.data() + done, text.size() - done); if (n <= 0) std::exit(3); done += (size_t)n; }
}

template <class R, class... A, size_t... I>
std::string call(R (*f)(A...), const std::vector<Json>& args, std::index_sequence<I...>) {
    std::string out;
    if constexpr (std::is_void<R>::value) { f(decode<std::decay_t<A>>(args[I])...); out = "null"; }
    else { encode(f(decode<std::decay_t<A>>(args[I])...), out); }
    return out;
}

template <class R, class... A> int run(R (*f)(A...)) {
    std::string input;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(3, buf, sizeof buf)) > 0) input.append(buf, (size_t)n);
    size_t start = 0, end = input.find('\n');
    std::string token = input.substr(0, end == std::string::npos ? input.size() : end);
    int index = 0;
    while (end != std::string::npos) {
        start = end + 1;
        end = input.find('\n', start);
        std::string line = input.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (line.empty()) continue;
        Json args = parse(line);
        if (args.kind != Json::Arr) fail("call " + std::to_string(index + 1) + " is not a list of arguments");
        if (args.items.size() != sizeof...(A))
            fail("call " + std::to_string(index + 1) + ": " + std::to_string(args.items.size()) + " arguments given, the function takes " + std::to_string(sizeof...(A)));
        std::string text = call(f, args.items, std::index_sequence_for<A...>{});
        write_all(4, token + " " + std::to_string(index) + " " + text + "\n");
        ++index;
    }
    write_all(4, token + " end\n");
    return 0;
}

}  // namespace __harness
