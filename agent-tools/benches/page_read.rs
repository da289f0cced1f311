//! page_read on the fixture corpus against real headless Chromium: characters of the first
//! page_read result per page beside the page's raw HTML size, and the time per call; how many
//! of the page's interactive elements the model can reach through offset paging; then, per
//! page, one click and the characters of a `since_last` read against a full read.
//!
//! Besides the test fixtures and two generated pages it reads two real documentation pages
//! saved in `benches/fixtures/real/` (see its README): rustdoc's `std::vec::Vec` with its
//! stylesheets and scripts, and pydoc's `pathlib` reference.
//!
//! Run: `cargo bench -p agent-tools --bench page_read` (needs /usr/bin/chromium).
//! `PAGE_READ_PAGES=rustdoc` runs only the pages whose name contains that text;
//! `PAGE_READ_DUMP=<dir>` writes every page_read answer the run gets into that directory, so
//! two builds' answers can be compared with `diff -r`; `PAGE_READ_SPLIT=1` also prints the
//! time of page.js's read alone (the evaluate call), without the tool's formatting.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::{SessionId, ToolContext};
use agent_tools::{BrowserHost, CdpHost, PAGE_JS, page_tools};
use serde_json::{Value, json};

/// A documentation-like page: a sidebar of 400 nested links, 30 sections of prose with inline
/// links and code, repeated wrappers, a footer.
fn docs_page() -> String {
    let mut s = String::from(
        "<!doctype html><html><head><meta charset=utf-8><title>Docs: the guide</title><style>.w{padding:2px}</style></head><body>",
    );
    s.push_str("<header class=\"site-header\"><div class=\"w\"><div class=\"w\"><a href=\"/\">Home</a> <input type=search aria-label=\"Search docs\"></div></div></header>");
    // A collapsible "On this page" list, as documentation sites have: what the since_last
    // figure clicks.
    s.push_str("<button type=button aria-expanded=false onclick=\"const t=document.getElementById('toc');t.hidden=!t.hidden;this.setAttribute('aria-expanded',String(!t.hidden))\">On this page</button><ul id=toc hidden>");
    for sec in 0..10 {
        s.push_str(&format!("<li><a href=\"#s{sec}\">Section {sec}</a></li>"));
    }
    s.push_str("</ul>");
    s.push_str("<div class=\"layout\"><nav aria-label=\"Chapters\" class=\"sidebar\"><ul>");
    for c in 0..40 {
        s.push_str(&format!("<li class=\"chapter\"><div class=\"w\"><div class=\"w\"><span class=\"title\">Chapter {c}</span></div></div><ul>"));
        for p in 0..10 {
            s.push_str(&format!(
                "<li class=\"page\"><div class=\"w\"><a class=\"nav-link\" href=\"/docs/chapter-{c}/page-{p}.html\" title=\"Page {p} of chapter {c}\">{c}.{p} Page {p}</a></div></li>"
            ));
        }
        s.push_str("</ul></li>");
    }
    s.push_str("</ul></nav><main><article>");
    for sec in 0..30 {
        s.push_str(&format!("<section id=\"s{sec}\"><h2>Section {sec}</h2>"));
        for para in 0..4 {
            s.push_str(&format!(
                "<div class=\"w\"><p>Paragraph {para} of section {sec} explains a concept in some detail, with a <a href=\"/docs/ref/item-{sec}-{para}.html\">reference</a> and <code>some_function({para})</code> inline, and more words to make it read like real documentation prose.</p></div>"
            ));
        }
        s.push_str("<pre><code>fn main() {\n    println!(\"hello\");\n}\n</code></pre></section>");
    }
    s.push_str("</article></main></div><footer><div class=\"w\">");
    for f in 0..20 {
        s.push_str(&format!(
            "<a href=\"https://example.org/footer/{f}\">Footer link {f}</a> "
        ));
    }
    s.push_str("</div></footer></body></html>");
    s
}

/// A listing page: a 1 000-row table with a link and two buttons per row.
fn table_page() -> String {
    let mut s = String::from(
        "<!doctype html><html><head><meta charset=utf-8><title>Repository files</title></head><body><h1>Files</h1><table><tbody>",
    );
    for r in 0..1000 {
        s.push_str(&format!(
            "<tr class=\"row\"><td class=\"icon\"><svg width=16 height=16><rect width=16 height=16></rect></svg></td><td><a href=\"/repo/blob/main/src/module_{r}/file_{r}.rs\">src/module_{r}/file_{r}.rs</a></td><td>Commit message for file {r}</td><td><button type=button>Copy path</button> <button type=button aria-expanded=false>More</button></td></tr>"
        ));
    }
    // "More" opens a row's menu (two more buttons), as file listings do: what the since_last
    // figure clicks.
    s.push_str("</tbody></table><script>document.addEventListener('click',(e)=>{const b=e.target.closest('button[aria-expanded]');if(!b)return;const open=b.getAttribute('aria-expanded')!=='true';b.setAttribute('aria-expanded',String(open));if(open){b.insertAdjacentHTML('afterend','<span class=menu><button type=button>View history</button> <button type=button>Blame</button></span>')}else{b.nextElementSibling.remove()}})</script></body></html>");
    s
}

/// The element each page's since_last figure clicks (the first line naming it).
fn click_target(page: &str) -> &'static str {
    match page {
        "links.html" => "\"Second page\"",
        "form.html" => "\"Show details\"",
        "shadow.html" => "\"Increment\"",
        "rerender.html" => "\"Re-render\"",
        "page2.html" => "\"Other button\"",
        "frame.html" => "\"Frame button\"",
        "docs (generated)" => "\"On this page\"",
        "rustdoc std::vec::Vec" => "\"Summary\"",
        "pydoc pathlib" => "\"index\"",
        _ => "\"More\"",
    }
}

/// A saved real page or one of its files, decompressed.
fn real(name: &str) -> String {
    use std::io::Read;
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("benches/fixtures/real")
        .join(name);
    let mut out = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_string(&mut out)
        .unwrap();
    out
}

/// Where each page is served: the fixtures by name, the real pages where their relative links
/// to their stylesheets and scripts resolve, the generated ones by number.
fn path_of(i: usize, name: &str) -> String {
    match name {
        "rustdoc std::vec::Vec" => "/std/vec/struct.Vec.html".into(),
        "pydoc pathlib" => "/pydoc/pathlib.html".into(),
        n if n.ends_with(".html") => format!("/{n}"),
        _ => format!("/gen{i}.html"),
    }
}

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next() {
        Some("css") => "text/css",
        Some("js") => "text/javascript",
        _ => "text/html; charset=utf-8",
    }
}

/// A page.js answer: a read comes as one JSON string.
fn parsed(v: Value) -> Value {
    match v {
        Value::String(text) => serde_json::from_str(&text).unwrap(),
        v => v,
    }
}

/// Pages through page_read with `offset` as a model would and counts the distinct refs it
/// reaches, against every visible interactive element page.js finds with no item limit.
async fn addressable(host: &dyn BrowserHost, read: &Arc<dyn agent_core::Tool>, dump: &Dump) -> (usize, usize) {
    let mut refs = std::collections::HashSet::new();
    let mut offset = 0usize;
    loop {
        let out = read
            .call(
                json!({"offset": offset}),
                ToolContext::detached(SessionId::new_random(), "bench"),
            )
            .await
            .unwrap()
            .text_content();
        dump.write(&format!("offset-{offset:05}"), &out);
        for l in out.lines() {
            let first = l.split_whitespace().next().unwrap_or("");
            if first.len() > 1 && first.starts_with('e') && first[1..].bytes().all(|b| b.is_ascii_digit()) {
                refs.insert(first.to_owned());
            }
        }
        let next = out
            .split("call page_read with offset=")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse::<usize>().ok());
        match next {
            Some(n) if n > offset => offset = n,
            _ => break,
        }
    }
    let all = parsed(
        host.evaluate(None, &format!("({PAGE_JS})(\"read\", {{\"maxItems\": 1000000}})"))
            .await
            .unwrap(),
    );
    let found = all["items"]
        .as_array()
        .map(|items| items.iter().filter(|i| i["k"] == "e").count())
        .unwrap_or(0);
    (refs.len(), found)
}

/// Where the answers of one page go when `PAGE_READ_DUMP` is set.
struct Dump(Option<std::path::PathBuf>);

impl Dump {
    fn new(page: usize) -> Dump {
        Dump(std::env::var_os("PAGE_READ_DUMP").map(|d| std::path::PathBuf::from(d).join(format!("page{page:02}"))))
    }

    fn write(&self, what: &str, text: &str) {
        if let Some(dir) = &self.0 {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(format!("{what}.txt")), text).unwrap();
        }
    }
}

fn main() {
    let only = std::env::var("PAGE_READ_PAGES").unwrap_or_default();
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut pages: Vec<(String, String)> = Vec::new();
    for name in [
        "links.html",
        "form.html",
        "shadow.html",
        "rerender.html",
        "page2.html",
        "frame.html",
    ] {
        pages.push((name.to_string(), std::fs::read_to_string(dir.join(name)).unwrap()));
    }
    pages.push(("docs (generated)".into(), docs_page()));
    pages.push(("table (generated)".into(), table_page()));
    pages.push(("rustdoc std::vec::Vec".into(), real("rustdoc-vec.html.gz")));
    pages.push(("pydoc pathlib".into(), real("pydoc-pathlib.html.gz")));
    let mut routes: HashMap<String, String> = pages
        .iter()
        .enumerate()
        .map(|(i, (name, body))| (path_of(i, name), body.clone()))
        .collect();
    for file in [
        "normalize-9960930a.css",
        "rustdoc-b7b9f40b.css",
        "noscript-f7c3ffd8.css",
        "main-5013f961.js",
        "storage-41dd4d93.js",
    ] {
        routes.insert(format!("/static.files/{file}"), real(&format!("{file}.gz")));
    }
    let routes = Arc::new(routes);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    {
        let routes = routes.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let routes = routes.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut line = String::new();
                    let _ = reader.read_line(&mut line);
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                    let (status, body) = match routes.get(&path) {
                        Some(body) => ("200 OK", body.clone()),
                        None => ("404 Not Found", String::new()),
                    };
                    let mut stream = stream;
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        content_type(&path),
                        body.len()
                    );
                });
            }
        });
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let host = CdpHost::launch_default().await.expect("launch chromium");
        let shared: Arc<dyn BrowserHost> = Arc::new(host.clone());
        let tools = page_tools(shared.clone());
        let read = tools.iter().find(|t| t.spec().name == "page_read").unwrap().clone();
        println!("| page | raw HTML (chars) | rendered DOM (chars) | page_read (chars) | ratio | elements listed | page_read time (median of 10) | reachable by paging |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|");
        let mut since_rows = Vec::new();
        for (i, (name, body)) in pages.iter().enumerate() {
            if !name.contains(only.as_str()) {
                continue;
            }
            let dump = Dump::new(i);
            let path = path_of(i, name);
            shared.navigate(None, &format!("{base}{path}")).await.unwrap();
            shared.wait_settled(None, Duration::from_secs(5)).await.unwrap();
            let dom = shared
                .evaluate(None, "document.documentElement.outerHTML.length")
                .await
                .unwrap()
                .as_u64()
                .unwrap_or(0);
            let mut times = Vec::new();
            let mut out = String::new();
            for _ in 0..10 {
                let t = Instant::now();
                let o = read
                    .call(json!({}), ToolContext::detached(SessionId::new_random(), "bench"))
                    .await
                    .unwrap();
                times.push(t.elapsed());
                out = o.text_content();
            }
            dump.write("first", &out);
            for needle in ["push", "capacity", "Path", "e"] {
                let found = read
                    .call(json!({"find": needle}), ToolContext::detached(SessionId::new_random(), "bench"))
                    .await
                    .unwrap()
                    .text_content();
                dump.write(&format!("find-{needle}"), &found);
            }
            times.sort();
            if std::env::var_os("PAGE_READ_SPLIT").is_some() {
                // page.js's read alone and the whole tool call, alternating.
                let (mut alone, mut tool) = (Vec::new(), Vec::new());
                for _ in 0..10 {
                    let t = Instant::now();
                    let v = shared
                        .evaluate(None, &format!("({PAGE_JS})(\"read\", {{\"doc\": \"x\", \"compact\": true}})"))
                        .await
                        .unwrap();
                    alone.push(t.elapsed());
                    std::hint::black_box(v);
                    let t = Instant::now();
                    let o = read
                        .call(json!({}), ToolContext::detached(SessionId::new_random(), "bench"))
                        .await
                        .unwrap();
                    tool.push(t.elapsed());
                    std::hint::black_box(o);
                }
                alone.sort();
                tool.sort();
                eprintln!(
                    "{name}: page.js read alone {:.1} ms, page_read {:.1} ms (medians, alternating)",
                    alone[5].as_secs_f64() * 1000.0,
                    tool[5].as_secs_f64() * 1000.0
                );
            }
            let raw = body.chars().count();
            let chars = out.chars().count();
            let listed = out
                .lines()
                .filter(|l| {
                    let mut c = l.chars();
                    c.next() == Some('e') && c.next().is_some_and(|d| d.is_ascii_digit())
                })
                .count();
            let (reached, found) = addressable(shared.as_ref(), &read, &dump).await;
            println!(
                "| {name} | {raw} | {dom} | {chars} | {:.2} | {listed} | {:.1} ms | {reached} of {found} |",
                chars as f64 / raw as f64,
                times[5].as_secs_f64() * 1000.0
            );

            // One click, then what the model would read next: the changes against a full read.
            let needle = click_target(name);
            let target = out
                .lines()
                .find(|l| l.starts_with('e') && l.contains(needle))
                .and_then(|l| l.split_whitespace().next())
                .unwrap_or_else(|| panic!("no {needle} on {name}"))
                .to_owned();
            let cx = || ToolContext::detached(SessionId::new_random(), "bench");
            let click = tools.iter().find(|t| t.spec().name == "page_click").unwrap();
            click.call(json!({"ref": target}), cx()).await.unwrap();
            let since = read.call(json!({"since_last": true}), cx()).await.unwrap();
            let full = read.call(json!({}), cx()).await.unwrap().text_content();
            dump.write("since-last", &since.text_content());
            dump.write("after-click", &full);
            let s = &since.structured.as_ref().unwrap()["since_last"];
            let what = if s["full"] == true {
                format!("full read ({})", s["reason"].as_str().unwrap_or(""))
            } else {
                format!("+{} -{} ~{}", s["added"], s["removed"], s["changed"])
            };
            let (since_chars, full_chars) = (since.text_content().chars().count(), full.chars().count());
            since_rows.push(format!(
                "| {name} | {needle} | {what} | {full_chars} | {since_chars} | {:.2} |",
                since_chars as f64 / full_chars as f64
            ));
        }
        println!();
        println!("| page | clicked | since_last answered | full read after the click (chars) | since_last read (chars) | ratio |");
        println!("|---|---|---|---:|---:|---:|");
        for row in since_rows {
            println!("{row}");
        }
        host.close().await.unwrap();
    });
}
