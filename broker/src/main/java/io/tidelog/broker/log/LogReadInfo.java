package io.tidelog.broker.log;

import org.apache.kafka.common.record.Records;

/**
 * Whole batches read from one segment: a region of its file that the network layer sends with
 * {@code sendfile} (zero-copy), and the offset a reader asks for next.
 *
 * @param records a slice of the segment file ({@code FileRecords}); or, when there is nothing to
 *     read, empty records that need no open file, so that polling an idle partition (its followers
 *     do, all the time) holds no file descriptor
 * @param filePosition where the read starts in the segment file
 * @param nextOffset one past the last offset of the last batch read
 */
public record LogReadInfo(Records records, int filePosition, long nextOffset) {}
