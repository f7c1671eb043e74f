package io.tidelog.broker.cluster;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * {@link MetadataStore} for a single broker, in a directory of Java properties files: one per topic
 * ({@code topics/<name>.properties}: {@code topic.id}, {@code partitions}, and {@code config.<key>}
 * entries) and {@code producer-ids.properties}. Every file is replaced atomically (temp file,
 * fsync, rename).
 *
 * <p>Thread-safe: writes are serialized, reads come from a concurrent map.
 */
public final class LocalMetadataStore implements MetadataStore {
  private static final String CONFIG_PREFIX = "config.";
  private final Path dir;
  private final Map<String, TopicMetadata> topics = new ConcurrentHashMap<>();
  private long nextProducerId;

  private LocalMetadataStore(Path dir) {
    this.dir = dir;
  }

  public static LocalMetadataStore open(Path dir) throws IOException {
    LocalMetadataStore store = new LocalMetadataStore(dir);
    Files.createDirectories(dir.resolve("topics"));
    try (DirectoryStream<Path> files =
        Files.newDirectoryStream(dir.resolve("topics"), "*.properties")) {
      for (Path file : files) {
        TopicMetadata topic = readTopic(file);
        store.topics.put(topic.name(), topic);
      }
    }
    Path producerIds = dir.resolve("producer-ids.properties");
    if (Files.exists(producerIds)) {
      store.nextProducerId = Long.parseLong(read(producerIds).getProperty("next", "0"));
    }
    return store;
  }

  private static TopicMetadata readTopic(Path file) throws IOException {
    Properties p = read(file);
    String fileName = file.getFileName().toString();
    Map<String, String> configs = new HashMap<>();
    for (String key : p.stringPropertyNames()) {
      if (key.startsWith(CONFIG_PREFIX)) {
        configs.put(key.substring(CONFIG_PREFIX.length()), p.getProperty(key));
      }
    }
    try {
      return new TopicMetadata(
          fileName.substring(0, fileName.length() - ".properties".length()),
          Uuid.fromString(p.getProperty("topic.id")),
          Integer.parseInt(p.getProperty("partitions")),
          configs);
    } catch (RuntimeException e) {
      throw new IOException("malformed topic metadata " + file, e);
    }
  }

  @Override
  public Optional<TopicMetadata> topic(String name) {
    return Optional.ofNullable(topics.get(name));
  }

  @Override
  public Collection<TopicMetadata> topics() {
    return List.copyOf(topics.values());
  }

  @Override
  public synchronized TopicMetadata createTopic(
      String name, int partitions, Map<String, String> configs) throws IOException {
    if (topics.containsKey(name)) {
      throw new TopicExistsException("Topic '" + name + "' already exists.");
    }
    return store(new TopicMetadata(name, Uuid.randomUuid(), partitions, configs));
  }

  @Override
  public synchronized TopicMetadata updateTopic(TopicMetadata topic) throws IOException {
    TopicMetadata current = topics.get(topic.name());
    if (current == null) {
      throw new UnknownTopicOrPartitionException("Topic '" + topic.name() + "' does not exist");
    }
    return store(
        new TopicMetadata(topic.name(), current.topicId(), topic.partitions(), topic.configs()));
  }

  private TopicMetadata store(TopicMetadata topic) throws IOException {
    Properties p = new Properties();
    p.setProperty("topic.id", topic.topicId().toString());
    p.setProperty("partitions", String.valueOf(topic.partitions()));
    topic.configs().forEach((key, value) -> p.setProperty(CONFIG_PREFIX + key, value));
    write(dir.resolve("topics").resolve(topic.name() + ".properties"), p);
    topics.put(topic.name(), topic);
    return topic;
  }

  @Override
  public synchronized boolean deleteTopic(String name) throws IOException {
    if (topics.remove(name) == null) {
      return false;
    }
    Files.deleteIfExists(dir.resolve("topics").resolve(name + ".properties"));
    return true;
  }

  @Override
  public synchronized long allocateProducerIds(int count) throws IOException {
    long first = nextProducerId;
    Properties p = new Properties();
    p.setProperty("next", String.valueOf(first + count));
    write(dir.resolve("producer-ids.properties"), p);
    nextProducerId = first + count;
    return first;
  }

  @Override
  public void close() {}

  private static Properties read(Path file) throws IOException {
    Properties p = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(reader);
    }
    return p;
  }

  private static void write(Path file, Properties p) throws IOException {
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    try (Writer writer = Files.newBufferedWriter(temp, StandardCharsets.UTF_8)) {
      p.store(writer, null);
    }
    try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.WRITE)) {
      channel.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
