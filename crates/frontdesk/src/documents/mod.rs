//! Documents made for people outside the web pages: files a guest, a company or an accountant is handed and keeps
//! (an issued invoice as a PDF).
//!
//! A document is made from a record of [`crate::model`] as it was stored, and from nothing else: this module
//! imports [`crate::model`] and [`crate::domain::money`] only, never the store or a surface, so that rendering
//! cannot read or change anything and the same record always makes the same bytes.

pub mod invoice_pdf;
