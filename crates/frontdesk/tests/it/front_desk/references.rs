//! Reservation references: short, unique and searchable, and given to older rows (with phone keys) when migrated.

use crate::common::TestServer;
use frontdesk::domain::Actor;
use serde_json::{json, Value};

use super::{hotel, stay};

on_both_engines!(references_are_short_unique_and_searchable, older_rows_get_references_and_phone_keys_when_migrated,);

async fn references_are_short_unique_and_searchable(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 1).await;
    let mut references = std::collections::HashSet::new();
    let mut last = Value::Null;
    for n in 0..20 {
        last = stay(&s, &org, &h, n, n + 1, None).await;
        let reference = last["reference"].as_str().unwrap().to_string();
        assert_eq!(reference.len(), 8);
        assert!(reference.chars().all(|c| "23456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c)), "{reference}");
        references.insert(reference);
    }
    assert_eq!(references.len(), 20, "unique");
    let reference = last["reference"].as_str().unwrap();
    // Typed as a person would: lower case, with a hyphen in the middle.
    let typed = format!("{}-{}", reference[..4].to_lowercase(), &reference[4..]);
    let found = s.get(&format!("/api/reservations?reference={typed}"), &org.auth()).await.expect(200);
    assert_eq!(found.body.as_array().unwrap().len(), 1);
    assert_eq!(found.body[0]["id"], last["id"]);
    assert_eq!(found.header("x-total-count"), Some("1"));
    let bad = s.get("/api/reservations?reference=K0OL", &org.auth()).await.expect(400);
    assert_eq!(bad.body["errors"][0]["field"], json!("reference"));
    // Another organization's reference finds nothing.
    let other = s.org("Other").await;
    let none = s.get(&format!("/api/reservations?reference={reference}"), &other.auth()).await.expect(200);
    assert_eq!(none.body, json!([]));
}

async fn older_rows_get_references_and_phone_keys_when_migrated(s: TestServer) {
    let org = s.org("Acme").await;
    let h = hotel(&s, &org, 1).await;
    for n in 0..3 {
        stay(&s, &org, &h, n, n + 1, None).await;
    }
    let guest = s
        .create(
            "/api/guests",
            &org.auth(),
            json!({"firstName": "Ana", "lastName": "Silva", "phone": "+351 912 345 678"}),
        )
        .await;
    // As a database written by the release before references and phone keys would hold them.
    {
        let mut conn = s.db.read().await.unwrap();
        frontdesk::store::query("UPDATE reservations SET reference = NULL").execute(&mut conn).await.unwrap();
        frontdesk::store::query("UPDATE guests SET phone_digits_reversed = NULL").execute(&mut conn).await.unwrap();
    }
    frontdesk::domain::migrate(&s.db).await.unwrap();
    let all = s.get("/api/reservations?limit=0", &org.auth()).await.expect(200);
    let references: std::collections::HashSet<&str> =
        all.body.as_array().unwrap().iter().map(|r| r["reference"].as_str().unwrap()).collect();
    assert_eq!(references.len(), 3);
    // The desk finds the guest by the end of the number, typed with other spacing, and by name.
    let actor = Actor::command_line(&org.id);
    for typed in ["912 345 678", "912345678", "(912) 345-678", "Ana Sil", "silva"] {
        let found = frontdesk::domain::front_office::find_guests(&s.db, &actor, typed, 10).await.unwrap();
        assert_eq!(found.iter().map(|g| g.id.clone()).collect::<Vec<_>>(), vec![guest.clone()], "{typed}");
    }
    let none = frontdesk::domain::front_office::find_guests(&s.db, &actor, "912 345 679", 10).await.unwrap();
    assert!(none.is_empty());
}
