//! The direction between the layers, checked on the source: `domain` calls `store`, `store` reads and writes the
//! records of `model`, and nothing points back up. The compiler cannot see this (one crate may name any of its
//! modules, and an inherent `impl` written in `domain` is callable wherever its type is), so these tests read the
//! files.

use std::fs;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `src/<dir>`, with its code lines (comment lines left out, since a doc link up is no
/// dependency).
fn code_of(dir: &str) -> Vec<(PathBuf, Vec<String>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    let mut pending = vec![root];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).expect("read a source folder") {
            let path = entry.expect("a folder entry").path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = fs::read_to_string(&path).expect("read a source file");
                let code = text
                    .lines()
                    .filter(|line| !line.trim_start().starts_with("//"))
                    .map(str::to_owned)
                    .collect::<Vec<_>>();
                files.push((path, code));
            }
        }
    }
    assert!(!files.is_empty(), "no source under src/{dir}");
    files
}

/// The places in `files` whose code line `offends`.
fn offences(files: &[(PathBuf, Vec<String>)], offends: impl Fn(&str) -> bool) -> Vec<String> {
    let mut found = Vec::new();
    for (path, code) in files {
        for line in code.iter().filter(|line| offends(line)) {
            found.push(format!("{}: {}", path.display(), line.trim()));
        }
    }
    found
}

/// Whether `line` names the module `name` of the crate (`crate::name`, or inside a `crate::{…}` group).
fn names_module(line: &str, name: &str) -> bool {
    let path = format!("crate::{name}");
    if line
        .match_indices(&path)
        .any(|(at, _)| !line[at + path.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
    {
        return true;
    }
    line.contains("crate::{") && line.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == name)
}

#[test]
fn the_store_does_not_name_the_domain() {
    let found = offences(&code_of("store"), |line| names_module(line, "domain"));
    assert!(
        found.is_empty(),
        "the store names the domain (move the type to `model`, or pass the rule's answer in):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_records_name_nothing_of_the_crate() {
    let found = offences(&code_of("model"), |line| line.contains("crate::") || line.contains("super::super"));
    assert!(found.is_empty(), "`model` imports only from itself:\n{}", found.join("\n"));
}

/// The rules the domain writes as `impl` blocks on the records (`ReservationStatus::can_move_to`,
/// `HousekeepingStatus::sellable`, …) are found by reading `domain/`, so that a new one is guarded too.
#[test]
fn the_store_calls_none_of_the_domains_rules_on_the_records() {
    let records: Vec<String> = code_of("model")
        .iter()
        .flat_map(|(_, code)| code.iter())
        .filter_map(|line| {
            let rest = line.strip_prefix("pub struct ").or_else(|| line.strip_prefix("pub enum "))?;
            Some(rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next()?.to_owned())
        })
        .collect();
    assert!(records.iter().any(|r| r == "Reservation"), "the records were not found: {records:?}");
    let mut rules = Vec::new();
    for (_, code) in code_of("domain") {
        let mut inside = false;
        for line in &code {
            if let Some(rest) = line.strip_prefix("impl ") {
                let name = rest.trim_end_matches(" {");
                inside = records.iter().any(|r| r == name);
                continue;
            }
            if line == "}" {
                inside = false;
            }
            if !inside {
                continue;
            }
            let item = line.trim_start();
            if let Some(rest) = item.strip_prefix("pub fn ").or_else(|| item.strip_prefix("pub const ")) {
                if let Some(name) = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next() {
                    rules.push(name.to_owned());
                }
            }
        }
    }
    for rule in ["can_move_to", "sellable", "ON_THE_BOOKS", "fits", "today"] {
        assert!(rules.iter().any(|r| r == rule), "the rule {rule} was not found in domain/: {rules:?}");
    }
    let found = offences(&code_of("store"), |line| {
        rules.iter().any(|rule| line.contains(&format!(".{rule}(")) || line.contains(&format!("::{rule}")))
    });
    assert!(
        found.is_empty(),
        "the store applies a rule of the domain (let the domain pass its answer in):\n{}",
        found.join("\n")
    );
}

/// Every write goes through one door, `domain::change::Change`, which begins the transaction with who makes the
/// change and derives what follows from what it wrote (the webhook event; later the audit and channel rows). The
/// store's transaction is begun there, and by the store's own writes that change no record (the backfill after a
/// migration, the fold of the lists' count changes, the filing of the audit log's newest entries, the readiness
/// probe).
#[test]
fn every_write_goes_through_the_door() {
    let allowed = [
        "domain/change.rs",
        "store/mod.rs",
        "store/audit_log.rs",
        "store/maintenance.rs",
        "store/reservation_counts.rs",
        "store/write_health.rs",
    ];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files: Vec<(PathBuf, Vec<String>)> = code_of("")
        .into_iter()
        .filter(|(path, _)| {
            let relative = path.strip_prefix(&src).unwrap_or(path).to_string_lossy().replace('\\', "/");
            !allowed.contains(&relative.as_str())
        })
        .collect();
    assert!(files.len() > 100, "the sources were not found: {}", files.len());
    let found = offences(&files, |line| {
        line.contains("begin_write(") || line.contains("WriteTx") || line.contains("record_event(")
    });
    assert!(
        found.is_empty(),
        "a write bypasses the door: begin it with `Change::begin(db, actor)` (or `Change::begin_as(db, writer)` \
         for a job, the booking page or a sign-in: domain/change.rs), pass `&mut Change` to the helpers, and say \
         what it wrote with `created`, `updated` or `deleted`:\n{}",
        found.join("\n")
    );
}

/// The code of `src/`, each file with its path relative to `src/` (`domain/change.rs`).
fn sources() -> Vec<(String, Vec<String>)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    code_of("")
        .into_iter()
        .map(|(path, code)| (path.strip_prefix(&src).unwrap_or(&path).to_string_lossy().replace('\\', "/"), code))
        .collect()
}

/// The places in the files under `dir` (a folder of `src/`, or a file) that name one of `modules`.
fn naming(dir: &str, modules: &[&str], except: &[&str]) -> Vec<String> {
    let files: Vec<(PathBuf, Vec<String>)> = sources()
        .into_iter()
        .filter(|(path, _)| (path.starts_with(&format!("{dir}/")) || path == dir) && !except.contains(&path.as_str()))
        .map(|(path, code)| (PathBuf::from(path), code))
        .collect();
    assert!(!files.is_empty(), "no source under src/{dir}");
    offences(&files, |line| modules.iter().any(|m| names_module(line, m)))
}

const SURFACES: [&str; 4] = ["http", "web", "mcp", "worker"];

/// `lib.rs`: the surfaces (`http`, `web`, `mcp`, `worker`) never name each other (`router.rs` assembles them), except
/// the bearer check `http/mcp.rs`, which hands the caller to `mcp`.
#[test]
fn no_surface_names_another() {
    let mut found = Vec::new();
    for surface in SURFACES {
        let others: Vec<&str> = SURFACES.iter().copied().filter(|s| *s != surface).collect();
        found.extend(naming(surface, &others, &["http/mcp.rs"]));
    }
    let found: Vec<String> = found.into_iter().filter(|l| !l.starts_with("http/mcp.rs")).collect();
    assert!(
        found.is_empty(),
        "a surface names another (share it through `app`, or assemble it in `router.rs`):\n{}",
        found.join("\n")
    );
}

/// `lib.rs`: `router` and `cli` sit above everything; only `main.rs`, `cli.rs` and `router.rs` name them.
#[test]
fn only_the_top_names_router_and_cli() {
    let mut found = Vec::new();
    for (path, code) in sources() {
        if ["main.rs", "cli.rs", "router.rs", "lib.rs"].contains(&path.as_str()) {
            continue;
        }
        for line in code.iter().filter(|l| names_module(l, "router") || names_module(l, "cli")) {
            found.push(format!("{path}: {}", line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "only the top names `router` and `cli` (move what is shared to `app`):\n{}",
        found.join("\n")
    );
}

/// `lib.rs`: the domain knows nothing of HTTP: it names no surface, no `app`, no `router` or `cli`, and no web
/// framework.
#[test]
fn the_domain_knows_nothing_of_http() {
    let mut found = naming("domain", &["http", "web", "mcp", "worker", "app", "router", "cli"], &[]);
    for (path, code) in sources().into_iter().filter(|(path, _)| path.starts_with("domain/")) {
        for line in code.iter().filter(|l| l.contains("axum::") || l.contains("hyper::") || l.contains("tower::")) {
            found.push(format!("{path}: {}", line.trim()));
        }
    }
    assert!(
        found.is_empty(),
        "the domain names HTTP (let the surface parse and answer; the domain takes and returns plain values):\n{}",
        found.join("\n")
    );
}

/// `lib.rs`: the store names no surface, no `app` and no `metrics`, and `app` names no surface.
#[test]
fn the_store_and_app_name_no_surface() {
    let mut found = naming("store", &["http", "web", "mcp", "worker", "app", "router", "cli", "metrics"], &[]);
    found.extend(naming("app", &["http", "web", "mcp", "worker", "router", "cli"], &[]));
    found.extend(naming("app.rs", &["http", "web", "mcp", "worker", "router", "cli"], &[]));
    assert!(found.is_empty(), "the store or `app` names a layer above it:\n{}", found.join("\n"));
}

/// `lib.rs`: all SQL lives in the store.
#[test]
fn all_sql_lives_in_the_store() {
    let statements = ["\"SELECT ", "\"INSERT INTO ", "\"UPDATE ", "\"DELETE FROM ", "\"CREATE ", "\"ALTER ", "\"DROP "];
    let mut found = Vec::new();
    for (path, code) in sources().into_iter().filter(|(path, _)| !path.starts_with("store/")) {
        for line in code.iter().filter(|l| statements.iter().any(|s| l.contains(s))) {
            found.push(format!("{path}: {}", line.trim()));
        }
    }
    assert!(found.is_empty(), "SQL outside the store (give the store a function for it):\n{}", found.join("\n"));
}

/// `channels/mod.rs`: the channel connections are an adapter beside the domain: the domain, the store and the
/// records never name them (a second standard sits beside Channex without touching them).
#[test]
fn nothing_below_the_channels_names_them() {
    let mut found = naming("domain", &["channels"], &[]);
    found.extend(naming("store", &["channels"], &[]));
    found.extend(naming("model", &["channels"], &[]));
    assert!(found.is_empty(), "the domain, store or records name the channel adapter:\n{}", found.join("\n"));
}

/// The module path of a file of `src/` (`domain/finance/ledger.rs` → `domain::finance::ledger`; a `mod.rs` is its
/// folder's module; `lib.rs` and `main.rs` the crate's).
fn module_of(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = path.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// The paths a file names of the crate (`crate::…`, `super::…`, `self::…`, in `use` lines and in code), each as the
/// module path it starts with, groups (`super::{a, b::c}`) opened.
fn named_paths(module: &[String], code: &str) -> Vec<Vec<String>> {
    let mut named = Vec::new();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for root in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(root) {
            if at > 0 && code[..at].ends_with(|c: char| word(c) || c == ':') {
                continue;
            }
            let base: Vec<String> = match root {
                "crate::" => Vec::new(),
                "super::" => module[..module.len().saturating_sub(1)].to_vec(),
                _ => module.to_vec(),
            };
            let rest = &code[at + root.len()..];
            // The path's segments up to a group, a generic, a call or the end of the path.
            let end = rest.find(|c: char| !(word(c) || c == ':')).unwrap_or(rest.len());
            let mut prefix = base.clone();
            prefix.extend(rest[..end].split("::").filter(|s| !s.is_empty()).map(str::to_owned));
            if rest[..end].ends_with("::") && rest[end..].starts_with('{') {
                let group = &rest[end + 1..rest[end..].find('}').map_or(rest.len(), |close| end + close)];
                for item in group.split(',') {
                    let mut path = prefix.clone();
                    path.extend(item.trim().split("::").map(str::trim).filter(|s| word_only(s)).map(str::to_owned));
                    named.push(path);
                }
            } else {
                named.push(prefix);
            }
        }
    }
    named
}

fn word_only(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// House style: no files import each other in a loop, so that the tree reads one way, from the surfaces down to
/// the records. A file and the folder module it belongs to (`finance/ledger.rs` and `finance/mod.rs`, which
/// declares it) are one family and may name each other.
#[test]
fn no_files_import_each_other_in_a_circle() {
    let files = sources();
    let modules: Vec<Vec<String>> = files.iter().map(|(path, _)| module_of(path)).collect();
    let file_of = |path: &[String]| -> Option<usize> {
        // The longest prefix of the path that is a file's module: the file that defines (or hands on) the name.
        (1..=path.len()).rev().find_map(|n| modules.iter().position(|m| m.as_slice() == &path[..n]))
    };
    let mut edges: Vec<Vec<usize>> = vec![Vec::new(); files.len()];
    for (from, (path, code)) in files.iter().enumerate() {
        if path == "main.rs" || path == "lib.rs" {
            continue;
        }
        for named in named_paths(&modules[from], &code.join("\n")) {
            let Some(to) = file_of(&named) else { continue };
            let family = modules[to].starts_with(&modules[from]) || modules[from].starts_with(&modules[to]);
            if to != from && !family && !edges[from].contains(&to) {
                edges[from].push(to);
            }
        }
    }
    // Tarjan's strongly connected components: a component of more than one file is a circle.
    struct Walk<'a> {
        edges: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        circles: Vec<Vec<usize>>,
    }
    fn visit(w: &mut Walk<'_>, v: usize) {
        w.index[v] = Some(w.next);
        w.low[v] = w.next;
        w.next += 1;
        w.stack.push(v);
        w.on_stack[v] = true;
        for &to in &w.edges[v] {
            match w.index[to] {
                None => {
                    visit(w, to);
                    w.low[v] = w.low[v].min(w.low[to]);
                }
                Some(i) if w.on_stack[to] => w.low[v] = w.low[v].min(i),
                Some(_) => {}
            }
        }
        if Some(w.low[v]) == w.index[v] {
            let mut component = Vec::new();
            while let Some(top) = w.stack.pop() {
                w.on_stack[top] = false;
                component.push(top);
                if top == v {
                    break;
                }
            }
            if component.len() > 1 {
                w.circles.push(component);
            }
        }
    }
    let n = files.len();
    let mut walk = Walk {
        edges: &edges,
        index: vec![None; n],
        low: vec![0; n],
        stack: Vec::new(),
        on_stack: vec![false; n],
        next: 0,
        circles: Vec::new(),
    };
    for v in 0..n {
        if walk.index[v].is_none() {
            visit(&mut walk, v);
        }
    }
    let circles: Vec<String> = walk
        .circles
        .iter()
        .map(|c| {
            let mut names: Vec<&str> = c.iter().map(|&i| files[i].0.as_str()).collect();
            names.sort_unstable();
            names.join(" ⇄ ")
        })
        .collect();
    assert!(circles.is_empty(), "files that import each other in a loop: {circles:#?}");
    // The check sees imports at all: the door is named by the files that write.
    let change = files.iter().position(|(path, _)| path == "domain/change.rs").expect("domain/change.rs");
    assert!(edges.iter().filter(|e| e.contains(&change)).count() > 20, "the imports of the door were not found");
}
