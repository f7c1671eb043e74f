package io.tidelog.broker.log;

import org.apache.kafka.common.record.FileRecords;

/**
 * Whole batches read from one segment: a region of its file that the network layer sends with
 * {@code sendfile} (zero-copy), and the offset a reader asks for next.
 *
 * @param records a slice of the segment file; {@code records.sizeInBytes()} may be 0
 * @param filePosition where the slice starts in {@code records.file()}
 * @param nextOffset one past the last offset of the last batch in the slice
 */
public record LogReadInfo(FileRecords records, int filePosition, long nextOffset) {}
