//! The OpenAPI 3.1 document, generated from the handlers' annotations.
//!
//! Handlers declare their success answers and the errors particular to them (403, 404, 409), the errors by status
//! and description only. The [`StandardResponses`] modifier gives every error answer its problem document body and
//! adds what every operation shares, so no handler can forget it: `400` for operations with input, `401` for
//! operations that take credentials, and a `default` problem document.

use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

use super::problem::{Problem, PROBLEM_JSON};
use crate::domain::FieldError;

pub const API_KEY: &str = "apiKey";
pub const ACCESS_TOKEN: &str = "accessToken";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Frontdesk",
        version = "1.0.0",
        description = "Hotel operations REST service: reservations, guests, rooms, rates and inventory (ARI), \
public availability and booking requests, signed webhooks. Every credential belongs to one organization; a key may \
be pinned to one hotel. Errors are RFC 9457 problem documents."
    ),
    components(schemas(Problem, FieldError, crate::domain::finance::ledger::FolioSummary)),
    modifiers(&SecuritySchemes),
    tags(
        (name = "public", description = "Public availability and booking requests (no credentials needed)"),
        (name = "auth", description = "Operator sign-in"),
        (name = "apiKeys", description = "API keys (operator access token only)"),
        (name = "hotels", description = "Hotels"),
        (name = "billing", description = "A hotel's tax and billing settings: VAT rates, city tax, extras (an extension; docs/money.md)"),
        (name = "folios", description = "Folios as ledgers: charges, allowances, payments, refunds, fees; VAT per line (scopes folios:read, folios:write, payments:write; an extension; docs/money.md)"),
        (name = "reports", description = "Reports for an accountant: revenue by service date, category and VAT rate, payments by method; JSON or CSV (scope folios:read; an extension; docs/money.md)"),
        (name = "invoices", description = "Invoices issued from folios: numbered per hotel, never changed, cancelled only by a cancellation invoice; JSON or PDF (scopes invoices:write, folios:read; an extension; docs/invoices.md)"),
        (name = "operators", description = "The organization's operators and their roles: owner, manager, front desk, housekeeping, revenue, accountant (owners only; an extension; docs/roles.md)"),
        (name = "audit", description = "The audit log: who changed which record, when, with the fields before and after; append-only (scope audit:read; an extension; docs/audit-log.md)"),
        (name = "guests", description = "Guests (scopes guests:read / guests:write)"),
        (name = "reservations", description = "Reservations, their rooms and folios (scopes reservations:read / reservations:write)"),
        (name = "rooms", description = "Room types and physical rooms (scopes rooms:read / rooms:write)"),
        (name = "rates", description = "Rate plans and daily rates with inventory (scopes rates:read / rates:write)"),
        (name = "operations", description = "Health and the API description"),
    )
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            API_KEY,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Basic)
                    .description(Some(
                        "API key: `Authorization: Basic <base64 of the key secret>`; the decoded value is the \
                         secret alone, with no username and no colon.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            ACCESS_TOKEN,
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "Authorization",
                "Operator access token: `Authorization: Token <ACCESS_TOKEN>` (from POST /api/auth/login).",
            ))),
        );
    }
}

/// Completes the document once every router is merged in.
pub fn finish(doc: &mut utoipa::openapi::OpenApi) {
    StandardResponses.modify(doc);
    CreatedRecordLinks.modify(doc);
}

/// Links from each create (`POST /api/things`) to what can be done with the record it answers (`/api/things/{id}`
/// and the paths below it that take no other parameter), its `id` as the parameter: the relations a client reads
/// in the document, and that a stateful tester follows (Schemathesis chains a create with the record's reads, changes
/// and deletion through them).
struct CreatedRecordLinks;

impl Modify for CreatedRecordLinks {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::extensions::Extensions;
        use utoipa::openapi::link::LinkBuilder;
        let paths = &openapi.paths.paths;
        // (the create's path, the link's name, the linked operation's reference, its parameter)
        let mut links: Vec<(String, String, String, String)> = Vec::new();
        for (collection, item) in paths {
            if item.post.is_none() {
                continue;
            }
            for (path, record) in paths {
                let Some(rest) = path.strip_prefix(collection.as_str()).and_then(|r| r.strip_prefix("/{")) else {
                    continue;
                };
                let Some((parameter, below)) = rest.split_once('}') else { continue };
                if below.contains('{') {
                    continue;
                }
                let operations =
                    [("get", &record.get), ("put", &record.put), ("post", &record.post), ("delete", &record.delete)];
                for (method, operation) in operations {
                    let Some(operation) = operation else { continue };
                    let name = operation.operation_id.clone().unwrap_or_else(|| format!("{method} {path}"));
                    let reference = format!("#/paths/{}/{method}", path.replace('~', "~0").replace('/', "~1"));
                    links.push((collection.clone(), name, reference, parameter.to_string()));
                }
            }
        }
        for (collection, name, reference, parameter) in links {
            let Some(create) = openapi.paths.paths.get_mut(&collection).and_then(|item| item.post.as_mut()) else {
                continue;
            };
            for (status, response) in create.responses.responses.iter_mut() {
                if let (true, RefOr::T(response)) = (status.starts_with('2'), response) {
                    // utoipa 5.5 writes `Link::operation_ref` as `operation_ref`, a key no OpenAPI reader knows;
                    // the field's own name goes in through the link's flattened extensions instead.
                    let link = LinkBuilder::new()
                        .parameter(parameter.clone(), "$response.body#/id")
                        .extensions(Some(Extensions::from_iter([("operationRef", reference.clone())])))
                        .build();
                    response.links.insert(name.clone(), RefOr::T(link));
                }
            }
        }
    }
}

struct StandardResponses;

fn problem(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(PROBLEM_JSON, ContentBuilder::new().schema(Some(Ref::from_schema_name("Problem"))).build())
        .build()
}

impl Modify for StandardResponses {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        for item in openapi.paths.paths.values_mut() {
            let operations = [&mut item.get, &mut item.put, &mut item.post, &mut item.delete, &mut item.patch];
            for op in operations.into_iter().flatten() {
                add_standard_responses(op);
            }
        }
    }
}

fn add_standard_responses(op: &mut Operation) {
    let has_input = op.request_body.is_some() || op.parameters.as_ref().is_some_and(|p| !p.is_empty());
    let secured = op.security.is_some();
    let responses = &mut op.responses.responses;
    // Every error answer is a problem document: the handlers' annotations name the status and what it means.
    for (status, response) in responses.iter_mut() {
        if let (true, RefOr::T(response)) = (status.starts_with('4') || status.starts_with('5'), response) {
            if response.content.is_empty() {
                response.content = problem(&response.description).content;
            }
        }
    }
    if has_input {
        responses.entry("400".into()).or_insert_with(|| problem("The request is malformed or invalid").into());
    }
    if secured {
        responses.entry("401".into()).or_insert_with(|| problem("Missing or invalid credentials").into());
    }
    responses.entry("default".into()).or_insert_with(|| problem("Any other error, as a problem document").into());
}

/// A list item: the record's fields, every one of them unless the request's `fields` names a subset. Documented
/// as the record's schema with no field required, inline, so that projected answers conform to it.
pub struct Projected<T>(std::marker::PhantomData<T>);

impl<T: utoipa::ToSchema> utoipa::PartialSchema for Projected<T> {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::Schema;
        use utoipa::openapi::RefOr;
        match T::schema() {
            RefOr::T(Schema::Object(mut object)) => {
                object.required.clear();
                object.description =
                    Some(format!("A {}: every field, or only those named by the `fields` parameter.", T::name()));
                RefOr::T(Schema::Object(object))
            }
            other => other,
        }
    }
}

impl<T: utoipa::ToSchema> utoipa::ToSchema for Projected<T> {
    fn name() -> std::borrow::Cow<'static, str> {
        format!("{}Fields", T::name()).into()
    }
}
