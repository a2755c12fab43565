/// mimalloc instead of the C library's allocator: under 32 clients, glibc's malloc and free (their locks, free-list
/// upkeep and consolidation) were about a sixth of the service's CPU per list page (profile of the throughput
/// benchmark).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let (cli, matches) = frontdesk::cli::parse();
    match frontdesk::cli::run(cli, &matches).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
