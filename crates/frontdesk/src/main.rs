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
