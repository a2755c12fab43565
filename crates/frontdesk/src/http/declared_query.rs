//! Query parameters an operation does not declare are refused (400), as unknown JSON fields in a write are
//! (decisions.md: typos must not be silently ignored). A misspelt filter (`?hotelID=…`) that was ignored would widen
//! a list to every hotel of the organization without a word; the OpenAPI document already lists what each operation
//! takes, so it is the one place the rule reads, and a parameter added to a handler without its annotation is
//! refused in the tests rather than left undocumented.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::path::{Operation, Parameter, ParameterIn};
use utoipa::openapi::OpenApi;

use super::problem::Problem;
use crate::domain::FieldError;

/// The query parameter names of every operation in the document, by path template (the template axum matched, which
/// is the document's path) and method: keyed by path first, so that a request's lookup borrows its matched path
/// instead of allocating a key.
#[derive(Clone, Default)]
pub struct DeclaredQueries(Arc<HashMap<String, Vec<OperationQuery>>>);

/// One operation's method and the query parameter names it declares.
type OperationQuery = (Method, HashSet<String>);

impl DeclaredQueries {
    pub fn of(doc: &OpenApi) -> DeclaredQueries {
        let mut declared: HashMap<String, Vec<OperationQuery>> = HashMap::new();
        for (path, item) in &doc.paths.paths {
            let shared = item.parameters.as_deref().unwrap_or_default();
            let operations = [
                (Method::GET, &item.get),
                (Method::PUT, &item.put),
                (Method::POST, &item.post),
                (Method::DELETE, &item.delete),
                (Method::PATCH, &item.patch),
            ];
            for (method, operation) in operations {
                if let Some(operation) = operation {
                    declared.entry(path.clone()).or_default().push((method, query_names(shared, operation)));
                }
            }
        }
        DeclaredQueries(Arc::new(declared))
    }

    /// The names `method` on `path` takes, or `None` for an operation the document does not describe. A HEAD is
    /// answered by its GET.
    fn names(&self, method: &Method, path: &str) -> Option<&HashSet<String>> {
        let method = if method == Method::HEAD { &Method::GET } else { method };
        let operations = self.0.get(path)?;
        operations.iter().find(|(declared, _)| declared == method).map(|(_, names)| names)
    }
}

fn query_names(shared: &[Parameter], operation: &Operation) -> HashSet<String> {
    shared
        .iter()
        .chain(operation.parameters.as_deref().unwrap_or_default())
        .filter(|parameter| matches!(parameter.parameter_in, ParameterIn::Query))
        .map(|parameter| parameter.name.clone())
        .collect()
}

/// Route middleware (it needs the matched path): 400 naming every query parameter the operation does not declare.
pub async fn refuse_undeclared(
    State(declared): State<DeclaredQueries>,
    matched: Option<MatchedPath>,
    request: Request,
    next: Next,
) -> Response {
    let names = matched.and_then(|matched| declared.names(request.method(), matched.as_str()));
    if let (Some(names), Some(query)) = (names, request.uri().query()) {
        let mut undeclared: Vec<FieldError> = Vec::new();
        for (name, _) in url::form_urlencoded::parse(query.as_bytes()) {
            let already = undeclared.iter().any(|error| error.field.as_deref() == Some(name.as_ref()));
            if !names.contains(name.as_ref()) && !already {
                undeclared.push(FieldError::field(name, undeclared_message(names)));
            }
        }
        if !undeclared.is_empty() {
            return Problem::from(crate::domain::Error::Validation(undeclared)).into_response();
        }
    }
    next.run(request).await
}

fn undeclared_message(names: &HashSet<String>) -> String {
    if names.is_empty() {
        return "is not a parameter of this operation, which takes none".to_owned();
    }
    let mut names: Vec<&str> = names.iter().map(String::as_str).collect();
    names.sort_unstable();
    format!("is not a parameter of this operation (it takes: {})", names.join(", "))
}
