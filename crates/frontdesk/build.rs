// `sqlx::migrate!` embeds the migrations when the crate compiles; a migration added without any other change must
// still rebuild it.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
