//! Reading many rows: a query's rows streamed through a bounded channel ([`stream`]), and counted ([`count`]).

use super::sql::Conditions;
use super::{query_with, Db, Row, StoreResult};

/// What the task reading a [`stream`]'s rows sends: a row, or that the rows ended. A channel that closes without
/// [`Streamed::End`] means that the task stopped early (it panicked, or the runtime is shutting down).
enum Streamed<T> {
    Row(StoreResult<T>),
    End,
}

/// The error of a stream whose reader stopped before the last row.
fn cut_short() -> super::Error {
    sqlx::Error::Protocol("the rows' reader stopped before the last row".into()).into()
}

/// Streams the rows of a query, mapped, through a bounded channel: memory stays flat however many rows match,
/// and the connection is held only while the consumer keeps reading.
///
/// The first row is read before this answers, so that a query that fails at once (no connection, a row that does
/// not decode) is an error for the caller to answer, not a stream that fails after a list has begun. After that the
/// stream ends only when the rows did: a failure, or a reader that stopped early, is an `Err` item, never a quiet
/// end that would pass a partial list for a whole one.
pub async fn stream<T: Send + 'static>(
    db: &Db,
    sql: String,
    conditions: Conditions,
    map: fn(&Row) -> StoreResult<T>,
) -> StoreResult<futures::stream::BoxStream<'static, StoreResult<T>>> {
    use futures::StreamExt;
    let (sender, mut receiver) = tokio::sync::mpsc::channel::<Streamed<T>>(64);
    let db = db.clone();
    tokio::spawn(async move {
        let mut conn = match db.read().await {
            Ok(conn) => conn,
            Err(err) => {
                let _ = sender.send(Streamed::Row(Err(err))).await;
                return;
            }
        };
        let mut rows = query_with(&sql, conditions).fetch(&mut conn);
        while let Some(row) = rows.next().await {
            let item = row.and_then(|row| map(&row));
            let failed = item.is_err();
            if sender.send(Streamed::Row(item)).await.is_err() || failed {
                return;
            }
        }
        let _ = sender.send(Streamed::End).await;
    });
    let first = match receiver.recv().await {
        Some(Streamed::Row(Ok(row))) => row,
        Some(Streamed::Row(Err(err))) => return Err(err),
        Some(Streamed::End) => return Ok(futures::stream::empty().boxed()),
        None => return Err(cut_short()),
    };
    let rest = futures::stream::unfold(Some(receiver), |receiver| async move {
        let mut receiver = receiver?;
        match receiver.recv().await {
            Some(Streamed::Row(Ok(row))) => Some((Ok(row), Some(receiver))),
            Some(Streamed::Row(Err(err))) => Some((Err(err), None)),
            Some(Streamed::End) => None,
            None => Some((Err(cut_short()), None)),
        }
    });
    Ok(futures::stream::once(async { Ok(first) }).chain(rest).boxed())
}

/// Counts the rows of a query (`sql` selects `COUNT(*) AS n`).
pub async fn count(db: &Db, sql: &str, conditions: Conditions) -> StoreResult<i64> {
    let row = query_with(sql, conditions).fetch_one(&mut *db.read().await?).await?;
    row.try_get("n")
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    fn stops_at_three(row: &Row) -> StoreResult<i64> {
        let n: i64 = row.try_get(0)?;
        assert!(n != 3, "the reader stops early");
        Ok(n)
    }

    #[tokio::test]
    async fn a_stream_whose_reader_stops_early_ends_with_an_error() {
        let db = Db::connect("sqlite::memory:", 2).await.unwrap();
        let sql = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n";
        let rows: Vec<_> =
            stream(&db, sql.into(), Conditions::new(db.engine()), stops_at_three).await.unwrap().collect().await;
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(matches!(rows[..2], [Ok(1), Ok(2)]), "{rows:?}");
        assert!(
            matches!(&rows[2], Err(err) if err.to_string().contains("stopped before the last row")),
            "not a quiet end: {rows:?}"
        );
        let whole: Vec<_> = stream(&db, sql.into(), Conditions::new(db.engine()), |row| row.try_get::<i64, _>(0))
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(whole.into_iter().collect::<StoreResult<Vec<i64>>>().unwrap(), [1, 2, 3, 4, 5]);
        db.close().await;
    }
}
