// The harness's test runner for an exercise's own Catch2 tests (in place of the
// exercise's tests-main.cpp): it reads the job's token and one JSON list
// `["<test case name>"]` on descriptor 3, runs exactly that TEST_CASE through Catch's
// own session, and writes "<token> 0 true" on descriptor 4 when it passed, else
// "<token> 0 <the first failed assertion, as a JSON string>", then "<token> end". The
// verdict is taken in the program's process: sandbox/README.md, "Test runners".
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <string>
#include <unistd.h>

namespace harness_runner {
int ran = 0;
bool ok = true;
std::string ran_name, message;

std::string json(const std::string& text) {
    std::string out = "\"";
    for (unsigned char c : text) {
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c < 0x20) { char buf[8]; snprintf(buf, sizeof buf, "\\u%04x", c); out += buf; }
        else out += static_cast<char>(c);
    }
    return out + "\"";
}

// The one string of a JSON list ["..."]; false if the line is not one.
bool name_of(const std::string& line, std::string& out) {
    size_t start = line.find("[\""), end = line.rfind("\"]");
    if (start == std::string::npos || end == std::string::npos || end < start + 2) return false;
    for (size_t i = start + 2; i < end; ++i) {
        char c = line[i];
        if (c != '\\') { out += c; continue; }
        if (++i >= end) return false;
        switch (line[i]) {
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case 'u': {
                if (i + 4 >= end) return false;
                unsigned long code = std::stoul(line.substr(i + 1, 4), nullptr, 16);
                i += 4;
                if (code < 0x80) out += static_cast<char>(code);
                else if (code < 0x800) { out += static_cast<char>(0xC0 | (code >> 6)); out += static_cast<char>(0x80 | (code & 0x3F)); }
                else { out += static_cast<char>(0xE0 | (code >> 12)); out += static_cast<char>(0x80 | ((code >> 6) & 0x3F)); out += static_cast<char>(0x80 | (code & 0x3F)); }
                break;
            }
            default: out += line[i];
        }
    }
    return true;
}

// A name as Catch's test spec reads it literally: its special characters escaped.
std::string spec_of(const std::string& name) {
    std::string out;
    for (char c : name) {
        if (c == '\\' || c == '*' || c == ',' || c == '[' || c == ']' || c == '~' || c == '"') out += '\\';
        out += c;
    }
    return out;
}

struct Listener : Catch::TestEventListenerBase {
    using TestEventListenerBase::TestEventListenerBase;
    bool assertionEnded(Catch::AssertionStats const& stats) override {
        auto const& result = stats.assertionResult;
        if (!result.isOk() && message.empty()) {
            auto where = result.getSourceInfo();
            message = std::string(where.file) + ":" + std::to_string(where.line) + ": ";
            if (result.hasExpression())
                message += result.getExpressionInMacro() + " with expansion: " + result.getExpandedExpression();
            if (result.hasMessage()) message += (result.hasExpression() ? "; " : "") + result.getMessage();
        }
        return true;
    }
    void testCaseEnded(Catch::TestCaseStats const& stats) override {
        ++ran;
        ran_name = stats.testInfo.name;
        if (stats.totals.assertions.failed > 0 || stats.totals.testCases.failed > 0 || stats.aborting) ok = false;
    }
};
}  // namespace harness_runner

using HarnessListener = harness_runner::Listener;
CATCH_REGISTER_LISTENER(HarnessListener)

int main() {
    using namespace harness_runner;
    std::string input;
    char buffer[4096];
    ssize_t got;
    while ((got = read(3, buffer, sizeof buffer)) > 0) input.append(buffer, static_cast<size_t>(got));
    size_t newline = input.find('\n');
    std::string token = input.substr(0, newline);
    std::string rest = newline == std::string::npos ? "" : input.substr(newline + 1);
    std::string wanted, result;
    if (!name_of(rest.substr(0, rest.find('\n')), wanted)) {
        result = json("the harness sent no test name");
    } else {
        Catch::Session session;
        std::string spec = spec_of(wanted);
        const char* argv[] = {"program", spec.c_str(), nullptr};
        int failed = session.applyCommandLine(2, argv);
        if (failed == 0) failed = session.run();
        if (ran != 1 || ran_name != wanted) result = json("no test case named \"" + wanted + "\" in the test file");
        else if (failed == 0 && ok) result = "true";
        else result = json(message.empty() ? "the test case failed" : message);
    }
    std::string line = token + " 0 " + result + "\n" + token + " end\n";
    for (size_t written = 0; written < line.size();) {
        ssize_t n = write(4, line.data() + written, line.size() - written);
        if (n <= 0) break;
        written += static_cast<size_t>(n);
    }
    return 0;
}
