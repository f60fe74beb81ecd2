
// The harness's test runner for an exercise's own tests (appended to the test crate's
// root, which includes the exercise's test file): built with `--test` and a custom test
// framework, it is handed every `#[test]` of the crate, ignored ones too. It reads the
// job's token and one JSON list `["<test name>"]` on descriptor 3, runs exactly that
// test (catching its panic), and writes "<token> 0 true" on descriptor 4 when it passed,
// else "<token> 0 <what failed, as a JSON string>", then "<token> end". The verdict is
// taken in the program's process: sandbox/README.md, "Test runners".
mod __harness_runner {
    extern crate test;
    use std::io::{Read, Write};
    use std::os::unix::io::FromRawFd;
    use std::sync::Mutex;

    static MESSAGE: Mutex<String> = Mutex::new(String::new());

    fn json(text: &str) -> String {
        let mut out = String::from("\"");
        for c in text.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    // The one string of a JSON list `["..."]` (the harness writes the name with JSON's escapes).
    fn name_of(line: &str) -> Option<String> {
        let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
        let body = inner.strip_prefix('"')?.strip_suffix('"')?;
        let mut out = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            }
        }
        Some(out)
    }

    fn outcome(t: &test::TestDescAndFn) -> Result<(), String> {
        std::panic::set_hook(Box::new(|info| {
            let text = format!("{info}");
            eprintln!("{text}");
            let mut kept = MESSAGE.lock().unwrap_or_else(|e| e.into_inner());
            if kept.is_empty() {
                *kept = text;
            }
        }));
        let ran = match t.testfn {
            test::TestFn::StaticTestFn(f) => std::panic::catch_unwind(f),
            _ => return Err("the harness runs only plain #[test] functions".into()),
        };
        let message = MESSAGE.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match (ran, t.desc.should_panic) {
            (Ok(Ok(())), test::ShouldPanic::No) => Ok(()),
            (Ok(Err(error)), test::ShouldPanic::No) => Err(format!("the test returned Err({error})")),
            (Ok(_), _) => Err("the test did not panic, and it should have (#[should_panic])".into()),
            (Err(_), test::ShouldPanic::No) => Err(message),
            (Err(_), test::ShouldPanic::Yes) => Ok(()),
            (Err(_), test::ShouldPanic::YesWithMessage(expected)) if message.contains(expected) => Ok(()),
            (Err(_), test::ShouldPanic::YesWithMessage(expected)) => {
                Err(format!("the panic's message did not contain {expected:?}: {message}"))
            }
        }
    }

    pub fn run(tests: &[&test::TestDescAndFn]) {
        let mut input = String::new();
        let _ = unsafe { std::fs::File::from_raw_fd(3) }.read_to_string(&mut input);
        let mut lines = input.lines();
        let token = lines.next().unwrap_or("").to_string();
        let wanted = lines.next().and_then(name_of).unwrap_or_default();
        let chosen: Vec<_> = tests.iter().filter(|t| t.desc.name.as_slice() == wanted).collect();
        let result = if chosen.len() != 1 {
            json(&format!("no test named {wanted:?} in the test file"))
        } else {
            match outcome(chosen[0]) {
                Ok(()) => "true".to_string(),
                Err(message) => json(&message),
            }
        };
        let mut out = unsafe { std::fs::File::from_raw_fd(4) };
        let _ = out.write_all(format!("{token} 0 {result}\n{token} end\n").as_bytes());
    }
}
