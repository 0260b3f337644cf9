/*
 *   This program is free software: you can redistribute it and/or modify
 *   it under the terms of the GNU General Public License as published by
 *   the Free Software Foundation, either version 3 of the License, or
 *   (at your option) any later version.
 */

package weka.classifiers.bayes.hdpbnc;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.flatbuf.Block;
import org.apache.arrow.flatbuf.Bool;
import org.apache.arrow.flatbuf.FieldNode;
import org.apache.arrow.flatbuf.FloatingPoint;
import org.apache.arrow.flatbuf.Footer;
import org.apache.arrow.flatbuf.Int;
import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.Precision;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flatbuf.Schema;
import org.apache.arrow.flatbuf.Type;
import org.apache.arrow.flatbuf.Utf8;

/**
 * A small reader of Arrow IPC <em>files</em> (the random-access format: magic, messages, footer),
 * built directly on the flatbuffer classes of {@code arrow-format}, so that it needs neither
 * arrow-vector nor arrow-memory (and no {@code --add-opens} on JDK 17).
 *
 * <p>It reads what the hdp-bnc model file and spool jobs use: uncompressed, non-dictionary columns of
 * type int32, int64, float64, bool and utf8, with or without nulls, lists of int64 or float64 (no null
 * lists or items: the node table of model format 3.0), and the schema's custom metadata. Anything else
 * is refused with an {@link IOException} that names the column.
 *
 * <p>Layout (Arrow columnar format, "IPC File Format"): {@code ARROW1} plus 2 bytes of padding; the
 * stream messages; the footer flatbuffer; its length as a little-endian int32; {@code ARROW1}. Each
 * record batch block points at an encapsulated message ({@code 0xFFFFFFFF}, an int32 metadata length,
 * the {@code Message} flatbuffer, padding) followed by the message body, which holds the buffers.
 */
public final class ArrowFileReader {

  /** The column types this reader understands. */
  public enum ColumnType {
    INT32, INT64, FLOAT64, BOOL, UTF8,
    /** A list of int64 items: {@link Column#values} holds the items, {@link Column#offsets} each row's. */
    LIST_INT64,
    /** A list of float64 items, as {@link #LIST_INT64}. */
    LIST_FLOAT64;

    /** @return whether this is a list type */
    public boolean isList() {
      return this == LIST_INT64 || this == LIST_FLOAT64;
    }

    /** @return the type of a list's items (the type itself for the others) */
    ColumnType item() {
      return this == LIST_INT64 ? INT64 : this == LIST_FLOAT64 ? FLOAT64 : this;
    }
  }

  /** One column of one record batch, decoded into a plain Java array. */
  public static final class Column {
    /** The field's name. */
    public final String name;
    /** The column's type. */
    public final ColumnType type;
    /** Number of rows. */
    public final int length;
    /** Validity per row, or null when the column has no nulls. */
    public final boolean[] valid;
    /**
     * The values: int[], long[], double[], boolean[] or String[] (null where not valid); null for a
     * fixed-width column read without its values ({@link ArrowFileReader#values(Column)} decodes them).
     */
    public final Object values;
    /**
     * A fixed-width column's values as the file holds them (little-endian, exactly {@code length} values,
     * read only; position 0), or a list column's items (all of them, as the child array holds them), or
     * null for other types: what a checksum over the values reads without encoding them again.
     */
    public final ByteBuffer raw;
    /** A list column's offsets ({@code length + 1}, non-decreasing, into the items), else null. */
    public final int[] offsets;
    /** A list column's offsets as the file holds them (little-endian int32, {@code length + 1}), else null. */
    public final ByteBuffer rawOffsets;
    /** A list column's number of items, else {@code length}. */
    public final int items;

    Column(String name, ColumnType type, int length, boolean[] valid, Object values, ByteBuffer raw) {
      this(name, type, length, valid, values, raw, null, null, length);
    }

    Column(String name, ColumnType type, int length, boolean[] valid, Object values, ByteBuffer raw, int[] offsets,
        ByteBuffer rawOffsets, int items) {
      this.name = name;
      this.type = type;
      this.length = length;
      this.valid = valid;
      this.values = values;
      this.raw = raw;
      this.offsets = offsets;
      this.rawOffsets = rawOffsets;
      this.items = items;
    }

    /** @return the number of nulls */
    public int nullCount() {
      if (valid == null) {
        return 0;
      }
      int n = 0;
      for (boolean v : valid) {
        if (!v) {
          n++;
        }
      }
      return n;
    }
  }

  private static final byte[] MAGIC = "ARROW1".getBytes(StandardCharsets.US_ASCII);

  private final ByteBuffer m_Data;
  private final List<String> m_FieldNames = new ArrayList<>();
  private final List<ColumnType> m_FieldTypes = new ArrayList<>();
  private final Map<String, byte[]> m_Metadata = new LinkedHashMap<>();
  private final List<Block> m_Blocks = new ArrayList<>();

  /**
   * Parses the footer and the schema of an Arrow IPC file held in memory.
   *
   * @param data the whole file
   * @throws IOException if the bytes are not a complete Arrow IPC file, or use types this reader does
   *           not support
   */
  public ArrowFileReader(byte[] data) throws IOException {
    m_Data = ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN);
    try {
      readFooter(data);
    } catch (RuntimeException e) { // flatbuffer accessors on garbage: index/argument errors
      throw new IOException("not a complete Arrow IPC file (corrupted footer: " + e + ")", e);
    }
  }

  private void readFooter(byte[] data) throws IOException {
    int n = data.length;
    if (n < MAGIC.length * 2 + 2 + 4 || !startsWithMagic(data, 0) || !startsWithMagic(data, n - MAGIC.length)) {
      throw new IOException("not a complete Arrow IPC file (no ARROW1 magic at both ends: truncated, corrupted or "
        + "another format)");
    }
    int footerLength = m_Data.getInt(n - MAGIC.length - 4);
    int footerStart = n - MAGIC.length - 4 - footerLength;
    if (footerLength <= 0 || footerStart < 8) {
      throw new IOException("not a complete Arrow IPC file (bad footer length " + footerLength + ")");
    }
    ByteBuffer fb = slice(footerStart, footerLength);
    Footer footer = Footer.getRootAsFooter(fb);
    Schema schema = footer.schema();
    if (schema == null) {
      throw new IOException("not a complete Arrow IPC file (the footer has no schema)");
    }
    if (footer.dictionariesLength() > 0) {
      throw new IOException("dictionary-encoded Arrow files are not supported");
    }
    for (int i = 0; i < schema.customMetadataLength(); i++) {
      KeyValue kv = schema.customMetadata(i);
      m_Metadata.put(kv.key(), bytes(kv.valueAsByteBuffer()));
    }
    for (int i = 0; i < schema.fieldsLength(); i++) {
      org.apache.arrow.flatbuf.Field f = schema.fields(i);
      String name = f.name();
      if (f.dictionary() != null) {
        throw new IOException("column '" + name + "' is dictionary-encoded, which is not supported");
      }
      m_FieldNames.add(name);
      m_FieldTypes.add(f.childrenLength() > 0 ? listType(f) : columnType(f));
    }
    for (int i = 0; i < footer.recordBatchesLength(); i++) {
      m_Blocks.add(footer.recordBatches(new Block(), i));
    }
  }

  /** A list of int64 or float64 items (the items' field flat itself), else refused as nested. */
  private static ColumnType listType(org.apache.arrow.flatbuf.Field f) throws IOException {
    if (f.typeType() == Type.List && f.childrenLength() == 1) {
      org.apache.arrow.flatbuf.Field item = f.children(0);
      if (item.childrenLength() == 0 && item.dictionary() == null) {
        ColumnType t = columnType(item);
        if (t == ColumnType.INT64) {
          return ColumnType.LIST_INT64;
        }
        if (t == ColumnType.FLOAT64) {
          return ColumnType.LIST_FLOAT64;
        }
      }
    }
    throw new IOException("column '" + f.name() + "' is nested, which is not supported (only lists of int64 or "
      + "float64)");
  }

  private static ColumnType columnType(org.apache.arrow.flatbuf.Field f) throws IOException {
    byte t = f.typeType();
    switch (t) {
      case Type.Int: {
        Int it = (Int) f.type(new Int());
        if (it.isSigned() && it.bitWidth() == 32) {
          return ColumnType.INT32;
        }
        if (it.isSigned() && it.bitWidth() == 64) {
          return ColumnType.INT64;
        }
        throw new IOException("column '" + f.name() + "' has type " + (it.isSigned() ? "int" : "uint")
          + it.bitWidth() + "; only int32 and int64 are supported");
      }
      case Type.FloatingPoint: {
        FloatingPoint fp = (FloatingPoint) f.type(new FloatingPoint());
        if (fp.precision() == Precision.DOUBLE) {
          return ColumnType.FLOAT64;
        }
        throw new IOException("column '" + f.name() + "' is a float of precision " + fp.precision()
          + "; only float64 is supported");
      }
      case Type.Bool:
        f.type(new Bool());
        return ColumnType.BOOL;
      case Type.Utf8:
        f.type(new Utf8());
        return ColumnType.UTF8;
      default:
        throw new IOException("column '" + f.name() + "' has Arrow type "
          + (t >= 0 && t < Type.names.length ? Type.names[t] : Byte.toString(t)) + ", which is not supported");
    }
  }

  private static boolean startsWithMagic(byte[] data, int at) {
    for (int i = 0; i < MAGIC.length; i++) {
      if (data[at + i] != MAGIC[i]) {
        return false;
      }
    }
    return true;
  }

  private static byte[] bytes(ByteBuffer b) {
    if (b == null) {
      return new byte[0];
    }
    byte[] out = new byte[b.remaining()];
    b.duplicate().get(out);
    return out;
  }

  private ByteBuffer slice(long start, long length) throws IOException {
    if (start < 0 || length < 0 || start + length > m_Data.capacity()) {
      throw new IOException("not a complete Arrow IPC file (a block points outside the file: truncated?)");
    }
    ByteBuffer b = m_Data.duplicate();
    b.position((int) start);
    b.limit((int) (start + length));
    return b.slice().order(ByteOrder.LITTLE_ENDIAN);
  }

  /** @return the column names, in schema order */
  public List<String> fieldNames() {
    return Collections.unmodifiableList(m_FieldNames);
  }

  /** @return the column types, in schema order */
  public List<ColumnType> fieldTypes() {
    return Collections.unmodifiableList(m_FieldTypes);
  }

  /** @return the schema's custom metadata: key to raw (UTF-8) value bytes, in file order */
  public Map<String, byte[]> metadata() {
    return Collections.unmodifiableMap(m_Metadata);
  }

  /** @return the number of record batches */
  public int numBatches() {
    return m_Blocks.size();
  }

  /**
   * Decodes one record batch.
   *
   * @param index the batch, 0-based
   * @return its columns, in schema order
   * @throws IOException if the batch is truncated, compressed or inconsistent with the schema
   */
  public List<Column> readBatch(int index) throws IOException {
    return readBatch(index, true);
  }

  /**
   * Decodes one record batch, its fixed-width columns' values only if {@code values} (else their
   * {@link Column#values} are null and {@link #values(Column)} decodes them from {@link Column#raw} when
   * wanted: a reader that checks a large file first and then uses one batch at a time holds one batch's
   * arrays at a time).
   *
   * @param index the batch, 0-based
   * @param values whether to decode the fixed-width columns' values now
   * @return its columns, in schema order
   * @throws IOException if the batch is truncated, compressed or inconsistent with the schema
   */
  public List<Column> readBatch(int index, boolean values) throws IOException {
    try {
      return decodeBatch(index, values);
    } catch (RuntimeException e) {
      throw new IOException("unreadable record batch " + index + " (" + e + ")", e);
    }
  }

  /**
   * A column's values: {@link Column#values}, or decoded now from {@link Column#raw} for a fixed-width
   * column read without them.
   *
   * @param c a column of {@link #readBatch(int, boolean)}
   * @return int[], long[], double[], boolean[] or String[]
   */
  public static Object values(Column c) {
    if (c.values != null || c.raw == null) {
      return c.values;
    }
    return fixedWidth(c.type.item(), c.raw.duplicate().order(ByteOrder.LITTLE_ENDIAN), c.items);
  }

  private List<Column> decodeBatch(int index, boolean decodeValues) throws IOException {
    Block block = m_Blocks.get(index);
    long offset = block.offset();
    int metaLength = block.metaDataLength();
    ByteBuffer prefix = slice(offset, Math.min(8, metaLength));
    int skip = 4;
    int fbLength = prefix.getInt(0);
    if (fbLength == -1) { // continuation marker, then the length
      fbLength = prefix.getInt(4);
      skip = 8;
    }
    if (fbLength <= 0 || skip + fbLength > metaLength) {
      throw new IOException("record batch " + index + ": bad message length " + fbLength);
    }
    Message message = Message.getRootAsMessage(slice(offset + skip, fbLength));
    if (message.headerType() != MessageHeader.RecordBatch) {
      throw new IOException("block " + index + " is not a record batch");
    }
    RecordBatch rb = (RecordBatch) message.header(new RecordBatch());
    if (rb.compression() != null) {
      throw new IOException("record batch " + index + " is compressed, which is not supported");
    }
    ByteBuffer body = slice(offset + metaLength, block.bodyLength());
    long rows = rb.length();
    if (rows < 0 || rows > Integer.MAX_VALUE) {
      throw new IOException("record batch " + index + ": bad length " + rows);
    }
    int n = (int) rows;
    int nFields = m_FieldNames.size();
    int nNodes = nFields;
    for (ColumnType t : m_FieldTypes) {
      nNodes += t.isList() ? 1 : 0; // a list's items are a field node (and two buffers) of their own
    }
    if (rb.nodesLength() != nNodes) {
      throw new IOException("record batch " + index + " has " + rb.nodesLength() + " field nodes, the schema "
        + nNodes);
    }
    List<Column> out = new ArrayList<>(nFields);
    int buf = 0;
    int fieldNode = 0;
    for (int f = 0; f < nFields; f++) {
      FieldNode node = rb.nodes(new FieldNode(), fieldNode++);
      String name = m_FieldNames.get(f);
      ColumnType type = m_FieldTypes.get(f);
      if (node.length() != n) {
        throw new IOException("column '" + name + "' of batch " + index + " has " + node.length()
          + " rows, the batch " + n);
      }
      if (type.isList()) {
        out.add(listColumn(body, rb, buf, node, rb.nodes(new FieldNode(), fieldNode++), name, type, n,
          decodeValues));
        buf += 4;
        continue;
      }
      int nBuffers = type == ColumnType.UTF8 ? 3 : 2;
      if (buf + nBuffers > rb.buffersLength()) {
        throw new IOException("record batch " + index + ": too few buffers for column '" + name + "'");
      }
      ByteBuffer validity = buffer(body, rb, buf);
      boolean[] valid = null;
      if (node.nullCount() > 0) {
        valid = bits(validity, n, name);
      }
      Object values;
      ByteBuffer raw = null;
      switch (type) {
        case INT32:
        case INT64:
        case FLOAT64: {
          long bytes = (type == ColumnType.INT32 ? 4L : 8L) * n;
          ByteBuffer d = need(buffer(body, rb, buf + 1), bytes, name); // so bytes fits the buffer's int capacity
          ByteBuffer exact = d.duplicate();
          exact.position(0);
          exact.limit((int) bytes);
          raw = exact.slice().asReadOnlyBuffer();
          values = decodeValues ? fixedWidth(type, d, n) : null;
          break;
        }
        case BOOL:
          values = bits(buffer(body, rb, buf + 1), n, name);
          break;
        case UTF8: {
          ByteBuffer offs = need(buffer(body, rb, buf + 1), 4L * (n + 1), name);
          ByteBuffer chars = buffer(body, rb, buf + 2);
          String[] a = new String[n];
          for (int i = 0; i < n; i++) {
            int lo = offs.getInt(4 * i);
            int hi = offs.getInt(4 * (i + 1));
            if (lo < 0 || hi < lo || hi > chars.capacity()) {
              throw new IOException("column '" + name + "': bad string offsets");
            }
            if (valid == null || valid[i]) {
              byte[] s = new byte[hi - lo];
              ByteBuffer c = chars.duplicate();
              c.position(lo);
              c.get(s);
              a[i] = new String(s, StandardCharsets.UTF_8);
            }
          }
          values = a;
          break;
        }
        default:
          throw new AssertionError(type);
      }
      out.add(new Column(name, type, n, valid, values, raw));
      buf += nBuffers;
    }
    return out;
  }

  /**
   * A list column: no null lists or items; offsets from 0, non-decreasing, the last one the number of
   * items; the items' values (long[] or double[]) decoded if {@code decodeValues}.
   */
  private Column listColumn(ByteBuffer body, RecordBatch rb, int buf, FieldNode node, FieldNode itemNode,
      String name, ColumnType type, int n, boolean decodeValues) throws IOException {
    if (buf + 4 > rb.buffersLength()) {
      throw new IOException("too few buffers for column '" + name + "'");
    }
    if (node.nullCount() > 0 || itemNode.nullCount() > 0) {
      throw new IOException("column '" + name + "': null lists or items are not supported");
    }
    long m = itemNode.length();
    if (m < 0 || m > Integer.MAX_VALUE / 8) {
      throw new IOException("column '" + name + "': bad number of items " + m);
    }
    int items = (int) m;
    ByteBuffer offs = need(buffer(body, rb, buf + 1), 4L * (n + 1), name);
    ByteBuffer exactOffsets = offs.duplicate();
    exactOffsets.position(0);
    exactOffsets.limit(4 * (n + 1));
    int[] offsets = new int[n + 1];
    exactOffsets.slice().order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(offsets);
    if (offsets[0] != 0 || offsets[n] != items) {
      throw new IOException("column '" + name + "': bad list offsets");
    }
    for (int i = 0; i < n; i++) {
      if (offsets[i + 1] < offsets[i]) {
        throw new IOException("column '" + name + "': bad list offsets");
      }
    }
    ByteBuffer d = need(buffer(body, rb, buf + 3), 8L * items, name);
    ByteBuffer exact = d.duplicate();
    exact.position(0);
    exact.limit(8 * items);
    ByteBuffer raw = exact.slice().asReadOnlyBuffer();
    Object values = decodeValues ? fixedWidth(type.item(), d, items) : null;
    return new Column(name, type, n, null, values, raw, offsets,
      exactOffsets.slice().asReadOnlyBuffer(), items);
  }

  /** The values of a fixed-width column: int[], long[] or double[]. */
  private static Object fixedWidth(ColumnType type, ByteBuffer d, int n) {
    switch (type) {
      case INT32: {
        int[] a = new int[n];
        d.asIntBuffer().get(a);
        return a;
      }
      case INT64: {
        long[] a = new long[n];
        d.asLongBuffer().get(a);
        return a;
      }
      default: {
        double[] a = new double[n];
        d.asDoubleBuffer().get(a);
        return a;
      }
    }
  }

  private ByteBuffer buffer(ByteBuffer body, RecordBatch rb, int i) throws IOException {
    org.apache.arrow.flatbuf.Buffer b = rb.buffers(new org.apache.arrow.flatbuf.Buffer(), i);
    long off = b.offset();
    long len = b.length();
    if (off < 0 || len < 0 || off + len > body.capacity()) {
      throw new IOException("a buffer points outside its record batch (truncated file?)");
    }
    ByteBuffer d = body.duplicate();
    d.position((int) off);
    d.limit((int) (off + len));
    return d.slice().order(ByteOrder.LITTLE_ENDIAN);
  }

  private static ByteBuffer need(ByteBuffer b, long bytes, String name) throws IOException {
    if (b.capacity() < bytes) {
      throw new IOException("column '" + name + "': data buffer too short");
    }
    return b;
  }

  private static boolean[] bits(ByteBuffer b, int n, String name) throws IOException {
    need(b, (n + 7L) / 8, name);
    boolean[] out = new boolean[n];
    for (int i = 0; i < n; i++) {
      out[i] = (b.get(i >>> 3) & (1 << (i & 7))) != 0;
    }
    return out;
  }
}
