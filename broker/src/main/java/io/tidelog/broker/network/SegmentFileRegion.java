package io.tidelog.broker.network;

import io.netty.channel.FileRegion;
import io.netty.util.AbstractReferenceCounted;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;

/**
 * A range of a log segment's file, written to the socket with {@code sendfile} (zero-copy). Unlike
 * Netty's {@code DefaultFileRegion} it does not close the channel when released: the channel
 * belongs to the log.
 */
final class SegmentFileRegion extends AbstractReferenceCounted implements FileRegion {
  private final FileChannel file;
  private final long position;
  private final long count;
  private long transferred;

  SegmentFileRegion(FileChannel file, long position, long count) {
    this.file = file;
    this.position = position;
    this.count = count;
  }

  @Override
  public long position() {
    return position;
  }

  @Override
  public long count() {
    return count;
  }

  @Override
  public long transferred() {
    return transferred;
  }

  @Override
  @Deprecated
  public long transfered() {
    return transferred;
  }

  @Override
  public long transferTo(WritableByteChannel target, long offset) throws IOException {
    long written = file.transferTo(position + offset, count - offset, target);
    if (written > 0) {
      transferred += written;
    }
    return written;
  }

  @Override
  public SegmentFileRegion retain() {
    super.retain();
    return this;
  }

  @Override
  public SegmentFileRegion retain(int increment) {
    super.retain(increment);
    return this;
  }

  @Override
  public SegmentFileRegion touch() {
    return this;
  }

  @Override
  public SegmentFileRegion touch(Object hint) {
    return this;
  }

  @Override
  protected void deallocate() {
    // The log owns the channel.
  }
}
