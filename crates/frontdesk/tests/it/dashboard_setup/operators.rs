//! Operators: invited, removed and changing passwords in the browser, with the rules the dashboard and the command line
//! share.

use crate::common::browser::Browser;
use crate::common::{Auth, PASSWORD};
use frontdesk::domain::{identity, Actor, Error};
use frontdesk::store::Engine;
use serde_json::json;

use super::{catalogue, message_beside, server, session_token};

on_both_engines_configured!(
    operators_are_invited_removed_and_change_passwords,
    operator_rules_hold_for_the_dashboard_and_the_command_line,
);

async fn operators_are_invited_removed_and_change_passwords(engine: Engine) {
    const BEA_PASSWORD: &str = "bea's own password";
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let c = catalogue(&s, &org, "Seaside Inn").await;
    let Some(b) = Browser::start(&s.base).await else { return };
    b.sign_in(&org.operator_email, PASSWORD).await;
    b.goto("/setup/operators").await;
    b.wait_for_text("Add an operator").await;
    b.fill("#name", "Bea Santos").await;
    b.fill("#email", "bea@example.com").await;
    b.click_text("button", "Add the operator").await;
    b.wait_for_text("Invitation for Bea Santos").await;
    let link = b.text("#invitation-link").await;
    assert!(link.starts_with(&format!("{}/invitation?token=fdi_", s.base)), "{link}");
    b.assert_page_ok("the invitation link").await;
    // Only a digest of the link is stored, and until she chooses a password nobody can sign in as her.
    let token = link.split("token=").nth(1).unwrap().to_string();
    assert_eq!(s.count("operator_invitations").await, 1);
    let stored: String = {
        let mut conn = s.db.read().await.unwrap();
        frontdesk::store::query("SELECT token_hash FROM operator_invitations")
            .fetch_one(&mut conn)
            .await
            .unwrap()
            .get(0)
    };
    assert_ne!(stored, token);
    b.goto("/setup/operators").await;
    b.wait_for_text("Invited: the link works until").await;
    assert!(!b.page_text().await.contains(&token), "the link is shown once");

    // Bea opens the link in her own browser, chooses a password and is signed in.
    let Some(bea) = Browser::start(&s.base).await else { return };
    bea.client.goto(&link).await.unwrap();
    bea.wait_for_text("Welcome, Bea Santos").await;
    bea.assert_page_ok("the invitation page").await;
    bea.fill("#password", "short").await;
    bea.click_text("button", "Set my password").await;
    bea.wait_for_text("must be at least 8 characters").await;
    bea.fill("#password", BEA_PASSWORD).await;
    bea.click_text("button", "Set my password").await;
    bea.wait_for_text("Welcome, Bea Santos. Your password is set.").await;
    assert_eq!(bea.path().await, format!("/hotels/{}/today", c.hotel));
    let bea_api = s.post("/api/auth/login", &Auth::None, json!({"email": "bea@example.com", "password": BEA_PASSWORD}));
    let bea_api = bea_api.await.expect(200).body["token"].as_str().unwrap().to_string();
    // The link worked once.
    bea.client.goto(&link).await.unwrap();
    bea.wait_for_text("This link does not work").await;
    let again = s.client.get(&link).send().await.unwrap();
    assert_eq!(again.status().as_u16(), 404);
    assert_eq!(s.count("operator_invitations").await, 0);

    // Removed: her browser's session and her API token stop working at once.
    b.goto("/setup/operators").await;
    b.wait_for_text("Can sign in").await;
    b.click_text("button", "Remove").await;
    b.accept_dialog().await;
    b.wait_for_text("Removed Bea Santos.").await;
    s.get("/api/auth/me", &Auth::Token(bea_api)).await.expect(401);
    let bea_cookie = session_token(&bea).await;
    s.get("/api/auth/me", &Auth::Token(bea_cookie)).await.expect(401);
    bea.goto(&format!("/hotels/{}/today", c.hotel)).await;
    bea.wait_for_text("Your session has ended").await;
    assert!(bea.path().await.starts_with("/sign-in"), "{}", bea.path().await);
    bea.close().await;

    // One's own password: refused with a wrong current password, and nothing changes.
    b.goto("/setup/password").await;
    b.fill("#currentPassword", "not my password").await;
    b.fill("#password", "a brand new password").await;
    b.click_text("button", "Change your password").await;
    b.wait_for_text("is not your current password").await;
    assert!(message_beside(&b, "currentPassword").await.contains("is not your current password"));
    b.assert_page_ok("the refused password change").await;
    s.get("/api/auth/me", &org.auth()).await.expect(200);
    let old = json!({"email": org.operator_email, "password": PASSWORD});
    s.post("/api/auth/login", &Auth::None, old.clone()).await.expect(200);
    // With the right one: every other session ends, this browser stays signed in.
    let before = session_token(&b).await;
    b.fill("#currentPassword", PASSWORD).await;
    b.fill("#password", "a brand new password").await;
    b.click_text("button", "Change your password").await;
    b.wait_for_text("Your password is changed.").await;
    s.get("/api/auth/me", &org.auth()).await.expect(401);
    s.get("/api/auth/me", &Auth::Token(before)).await.expect(401);
    s.post("/api/auth/login", &Auth::None, old).await.expect(401);
    b.goto("/setup/operators").await;
    b.wait_for_text("Add an operator").await;
    b.close().await;
}

/// The rules of managing operators, in the domain that the pages and the command line share: an operator removes
/// neither themselves nor (racing) the last operator; another organization's operators are not found; a reset ends
/// the sessions of whom it is for.
async fn operator_rules_hold_for_the_dashboard_and_the_command_line(engine: Engine) {
    let Some(s) = server(engine).await else { return };
    let org = s.org("Acme").await;
    let rival = s.org("Rival").await;
    let me = identity::authenticate_token(&s.db, &org.token).await.unwrap();
    let my_id = identity::find_operator_by_email(&s.db, &org.operator_email).await.unwrap().id;
    let rival_id = identity::find_operator_by_email(&s.db, &rival.operator_email).await.unwrap().id;
    assert!(matches!(identity::remove_operator(&s.db, &me, &my_id).await, Err(Error::Conflict(_))));
    assert!(matches!(identity::remove_operator(&s.db, &me, &rival_id).await, Err(Error::NotFound(_))));
    assert!(matches!(
        identity::reset_password(&s.db, &me, &rival_id, "a long password").await,
        Err(Error::NotFound(_))
    ));
    assert!(matches!(identity::reset_password(&s.db, &me, &my_id, "a long password").await, Err(Error::Conflict(_))));
    s.get("/api/auth/me", &rival.auth()).await.expect(200);
    // A colleague whose password is reset loses their sessions.
    let colleague =
        identity::add_operator(&s.db, &me, "cole@example.com", "Cole", "first password", &identity::Staffing::OWNER)
            .await
            .unwrap();
    let login = json!({"email": "cole@example.com", "password": "first password"});
    let cole =
        s.post("/api/auth/login", &Auth::None, login).await.expect(200).body["token"].as_str().unwrap().to_string();
    identity::reset_password(&s.db, &me, &colleague.id, "second password").await.unwrap();
    s.get("/api/auth/me", &Auth::Token(cole)).await.expect(401);
    // The e-mail is taken across organizations: the message is beside the e-mail field.
    let taken = identity::add_operator(
        &s.db,
        &me,
        &rival.operator_email,
        "Copy",
        "a long password",
        &identity::Staffing::OWNER,
    )
    .await;
    assert!(matches!(taken, Err(Error::Validation(ref errors)) if errors[0].field.as_deref() == Some("email")));
    // The command line may remove an organization's last operator (its administrator can create another).
    let system = Actor::command_line(&rival.id);
    identity::remove_operator(&s.db, &system, &rival_id).await.unwrap();
    s.get("/api/auth/me", &rival.auth()).await.expect(401);
    // Two operators removing each other at once: the second finds itself the last one's remover and is refused
    // (here the first removal is made by the command line, and `me` still holds its session's actor).
    identity::remove_operator(&s.db, &Actor::command_line(&org.id), &colleague.id).await.unwrap();
    let colleague_again = identity::add_operator(
        &s.db,
        &Actor::command_line(&org.id),
        "dee@example.com",
        "Dee",
        "a long password",
        &identity::Staffing::OWNER,
    )
    .await
    .unwrap();
    let dee = identity::authenticate_token(
        &s.db,
        s.post("/api/auth/login", &Auth::None, json!({"email": "dee@example.com", "password": "a long password"}))
            .await
            .expect(200)
            .body["token"]
            .as_str()
            .unwrap(),
    )
    .await
    .unwrap();
    identity::remove_operator(&s.db, &dee, &my_id).await.unwrap();
    let alone = identity::remove_operator(&s.db, &me, &colleague_again.id).await;
    assert!(matches!(alone, Err(Error::Conflict(_))), "{alone:?}");
    assert_eq!(s.count("operators").await, 1);
}
