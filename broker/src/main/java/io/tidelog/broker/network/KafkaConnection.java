package io.tidelog.broker.network;

import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.net.NetSocketInternal;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.kafka.common.memory.MemoryPool;
import org.apache.kafka.common.network.Send;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: size-prefixed frames in, responses out in request order while many
 * requests are in flight.
 *
 * <p>Framing: once a frame's 4-byte size is read and checked against {@code
 * socket.request.max.bytes}, its bytes are copied, as they arrive, into parts taken from the
 * listener's request memory ({@code queued.max.request.bytes}); a frame that came in one chunk is
 * parsed from its only part without a further copy, a larger one from one copy of its parts. The
 * memory goes back once the request is answered, or the connection closes. So a client holds only
 * what it has sent: a size prefix promising 100 MiB, with nothing after it, holds nothing. While
 * the memory is spent, the connection stops reading and tries again every {@link #MEMORY_RETRY_MS}
 * ms, as Kafka's selector mutes a channel its memory pool cannot serve; nobody runs out of heap.
 *
 * <p>Back-pressure: at most {@link #IN_FLIGHT_MAX} requests wait for their turn (one, while the
 * processor asks for {@link RequestProcessor#oneRequestAtATime()}); beyond that, and while the
 * socket's write queue is full, the connection stops reading and keeps the rest of the current
 * chunk until it resumes. Event loop only.
 */
final class KafkaConnection {
  static final int IN_FLIGHT_MAX = 64;
  private static final long MEMORY_RETRY_MS = 10;
  private static final int SIZE_PREFIX_BYTES = 4;
  private static final Logger LOG = LoggerFactory.getLogger(KafkaConnection.class);

  private final NetSocketInternal socket;
  private final Supplier<RequestProcessor> opener;
  private RequestProcessor processor;
  private final int requestMaxBytes;
  private final MemoryPool memory;
  private final Context context;
  private final String id;
  private final SocketWriter writer;
  private final ArrayDeque<Future<Optional<Send>>> inFlight = new ArrayDeque<>();
  private int sizeBytesRead;
  private int frameSize;

  /** The current frame's bytes so far, each part taken from the request memory as it arrived. */
  private final List<ByteBuffer> parts = new ArrayList<>();

  private int received;
  private Buffer pendingChunk;
  private int pendingPosition;
  private boolean paused;
  private boolean awaitingMemory;
  private boolean awaitingThrottle;
  private long mutedUntilNanos;
  private boolean closed;

  /**
   * @param opener opens the connection's processor when its first bytes arrive, so that on an
   *     encrypted connection the TLS handshake is done and its session known
   * @param encrypted whether bytes pass through TLS, which cannot carry {@code sendfile}
   * @param memory the listener's request memory, shared by its connections
   * @param onClosed told once when the connection closes, for either side's reason
   */
  KafkaConnection(
      NetSocketInternal socket,
      Supplier<RequestProcessor> opener,
      boolean encrypted,
      int requestMaxBytes,
      MemoryPool memory,
      Runnable onClosed) {
    this.socket = socket;
    this.opener = opener;
    this.requestMaxBytes = requestMaxBytes;
    this.memory = memory;
    this.context = Vertx.currentContext();
    this.id = socket.localAddress() + "-" + socket.remoteAddress();
    this.writer = new SocketWriter(socket, encrypted);
    socket.handler(chunk -> consume(chunk, 0));
    socket.exceptionHandler(this::onReadFailure);
    socket.closeHandler(
        v -> {
          closed = true;
          releaseParts();
          onClosed.run();
          if (processor != null) {
            processor.closed();
          }
        });
    socket.drainHandler(v -> maybeResume());
  }

  /** Reads frames from {@code chunk}; stops, keeping the rest, when the connection must pause. */
  private void consume(Buffer chunk, int from) {
    if (processor == null) {
      processor = opener.get();
    }
    int position = from;
    while (position < chunk.length() && !closed) {
      if (paused) {
        pendingChunk = chunk;
        pendingPosition = position;
        return;
      }
      if (sizeBytesRead < SIZE_PREFIX_BYTES) {
        while (position < chunk.length() && sizeBytesRead < SIZE_PREFIX_BYTES) {
          frameSize = frameSize << 8 | chunk.getByte(position++) & 0xff;
          sizeBytesRead++;
        }
        if (sizeBytesRead < SIZE_PREFIX_BYTES) {
          return;
        }
        int maxBytes = Math.min(requestMaxBytes, processor.requestMaxBytes());
        if (frameSize <= 0 || frameSize > maxBytes) {
          close(
              "a request frame of "
                  + frameSize
                  + " bytes is outside 1.."
                  + maxBytes
                  + (maxBytes < requestMaxBytes
                      ? " (sasl.server.max.receive.size, before authentication)"
                      : " (socket.request.max.bytes)"));
          return;
        }
        continue;
      }
      int length = Math.min(frameSize - received, chunk.length() - position);
      ByteBuffer part = memory.tryAllocate(length);
      if (part == null) {
        pendingChunk = chunk;
        pendingPosition = position;
        awaitMemory();
        return;
      }
      chunk.getBytes(position, position + length, part.array(), 0);
      part.position(length);
      parts.add(part);
      received += length;
      position += length;
      if (received == frameSize) {
        ByteBuffer request = assemble();
        sizeBytesRead = 0;
        frameSize = 0;
        received = 0;
        dispatch(request);
      }
    }
  }

  /**
   * The frame's parts as one buffer, to parse: the only part, or a copy of them all that holds
   * their reservation (their capacities add up to the frame's size, which the copy's release gives
   * back).
   */
  private ByteBuffer assemble() {
    ByteBuffer whole;
    if (parts.size() == 1) {
      whole = parts.get(0).flip();
    } else {
      whole = ByteBuffer.allocate(frameSize);
      parts.forEach(part -> whole.put(part.flip()));
      whole.flip();
    }
    parts.clear();
    return whole;
  }

  /** Stops reading until the request memory has room; tries again every few milliseconds. */
  private void awaitMemory() {
    awaitingMemory = true;
    pause();
    context
        .owner()
        .setTimer(
            MEMORY_RETRY_MS,
            id -> {
              awaitingMemory = false;
              maybeResume();
            });
  }

  /**
   * Stops reading for {@code ms}, as Kafka mutes a throttled client's channel (KIP-219); a mute
   * that ends later than the current one extends it.
   */
  private void throttle(long ms) {
    long until = System.nanoTime() + ms * 1_000_000;
    if (awaitingThrottle && until - mutedUntilNanos <= 0) {
      return;
    }
    awaitingThrottle = true;
    mutedUntilNanos = until;
    pause();
    context
        .owner()
        .setTimer(
            ms,
            id -> {
              if (System.nanoTime() - mutedUntilNanos >= 0) {
                awaitingThrottle = false;
                maybeResume();
              }
            });
  }

  private void releaseParts() {
    parts.forEach(memory::release);
    parts.clear();
  }

  private void dispatch(ByteBuffer request) {
    Future<Optional<Send>> response = processor.process(request);
    inFlight.add(response);
    response.onComplete(
        done -> {
          memory.release(request);
          writeCompleted();
        });
    if (inFlight.size() >= inFlightMax()) {
      pause();
    }
  }

  private int inFlightMax() {
    return processor.oneRequestAtATime() ? 1 : IN_FLIGHT_MAX;
  }

  private void onReadFailure(Throwable e) {
    if (e instanceof IOException) {
      LOG.debug("Connection {} failed: {}", id, e.toString()); // the client went away
      closed = true;
      socket.close();
    } else {
      close("read failed: " + e);
    }
  }

  private void writeCompleted() {
    while (!closed && !inFlight.isEmpty() && inFlight.peek().isComplete()) {
      Future<Optional<Send>> head = inFlight.poll();
      if (head.failed()) {
        close("the request could not be served: " + head.cause());
        return;
      }
      Optional<Send> send = head.result();
      if (send.isPresent()) {
        try {
          writer.write(send.get());
        } catch (IOException e) {
          close("writing a response failed: " + e);
          return;
        }
      }
      long muteMs = processor.takeMuteMs();
      if (muteMs > 0) {
        throttle(muteMs);
      }
      if (processor.closeAfterResponses()) {
        closed = true;
        socket.pause();
        socket.end(); // after what is written, such as the answer to a failed authentication
        return;
      }
    }
    maybeResume();
  }

  private void pause() {
    if (!paused) {
      paused = true;
      socket.pause();
    }
  }

  private void maybeResume() {
    if (closed) {
      return;
    }
    if (socket.writeQueueFull()) {
      pause();
      return;
    }
    if (paused && !awaitingMemory && !awaitingThrottle && inFlight.size() < inFlightMax()) {
      paused = false;
      Buffer pending = pendingChunk;
      pendingChunk = null;
      if (pending != null) {
        consume(pending, pendingPosition);
      }
      if (!paused) {
        socket.resume();
      }
    }
  }

  private void close(String reason) {
    if (!closed) {
      LOG.warn("Closing connection {}: {}", id, reason);
      closed = true;
      socket.pause();
      socket.close();
    }
  }
}
