//! Runs a TM experiment by name and prints its table:
//! `cargo run -p tm --example tm_experiment -- fb-isolation` (no name: all of them).
//! `--csv` prints CSV instead.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let csv = args.iter().any(|a| a == "--csv");
    let names: Vec<&str> = args
        .iter()
        .filter(|a| !a.starts_with("--"))
        .map(String::as_str)
        .collect();
    let names = if names.is_empty() {
        tm::experiments::NAMES.to_vec()
    } else {
        names
    };
    for name in names {
        match tm::experiments::run(name) {
            Some(t) if csv => print!("{}", t.to_csv()),
            Some(t) => println!("{t}"),
            None => {
                eprintln!(
                    "unknown experiment `{name}`; known: {}",
                    tm::experiments::NAMES.join(", ")
                );
                std::process::exit(2);
            }
        }
    }
}
