fn main() {
    eprintln!("sysyc: not yet wired");
    std::process::exit(1);
}
